package io.reactiverdma.reactive.impl;

/**
 * Where a {@link CompletionPoller} takes completions from: a CQ (and its completion channel) in production,
 * a scripted source in host tests.
 */
interface CompletionSource {
    /** Receives one completion; the arguments are {@code struct ibv_wc} fields (imm in host order). */
    interface Handler {
        void onCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags);
    }

    /** Takes up to one batch of completions and hands each to {@code handler}; returns how many. */
    int poll(Handler handler);

    /** True when {@link #arm()} and {@link #await(long)} work (the CQ has a completion channel). */
    boolean supportsEvents();

    /** Requests an event for the next completion ({@code ibv_req_notify_cq}). */
    void arm();

    /**
     * Sleeps until an event (acknowledged here), a {@link #wakeup()}, or {@code timeoutNs}. True when an
     * event arrived.
     */
    boolean await(long timeoutNs);

    /** Wakes a thread sleeping in {@link #await(long)} (or makes its next call return at once). Any thread. */
    void wakeup();

    /** Frees the source (the poller stopped). */
    void close();
}
