package io.reactiverdma.reactive.impl.verbs;

/**
 * A completion queue with its optional completion channel, polled by exactly one thread (its poller), which
 * also arms and awaits it; {@link #wakeup()} is the one call other threads make.
 */
public interface CompletionQueue {
    /** Receives one completion; the arguments are {@code struct ibv_wc} fields (imm in host order). */
    interface Handler {
        void onCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags);

        /**
         * The same with the completion's {@code qp_num}, which the queues call: a receive taken from a shared
         * receive queue is told apart by it alone (its {@code wr_id} is the SRQ's).
         */
        default void onCompletion(int qpNum, long wrId, int status, int opcode, int vendorErr, int byteLen,
                int immData, int wcFlags) {
            onCompletion(wrId, status, opcode, vendorErr, byteLen, immData, wcFlags);
        }
    }

    /**
     * The {@code src_qp} of the completion being handed to the handler now (the sender of a UD receive);
     * valid only inside {@link Handler#onCompletion}, on the polling thread.
     */
    default int sourceQpn() {
        return 0;
    }

    /** {@code ibv_poll_cq}: hands up to one batch of completions to {@code handler}; returns how many. */
    int poll(Handler handler);

    /** True when {@link #arm()} and {@link #await(long)} work (the CQ has a completion channel). */
    boolean supportsEvents();

    /** {@code ibv_req_notify_cq}: an event for the next completion. */
    void arm();

    /**
     * Sleeps until a completion event (acknowledged here), a {@link #wakeup()}, or {@code timeoutNs}. True
     * when an event arrived.
     */
    boolean await(long timeoutNs);

    /** Wakes a thread sleeping in {@link #await(long)} (or makes its next call return at once). Any thread. */
    void wakeup();

    /** Destroys the CQ and its channel (every QP on it destroyed first). */
    void close();
}
