package io.reactiverdma.reactive.impl.completion;

/**
 * What a completion is delivered to: the connection that posted the work request. The poller calls it on
 * its own thread with the pending entry (still in use: the target frees it) and the completion's fields.
 */
public interface CompletionTarget {
    void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags);

    /**
     * The same with the completion's {@code qp_num}, which the poller calls: a shared receive queue's
     * receives are posted by the SRQ, not by a connection, and only the QP number tells whose message it is.
     */
    default void onCompletion(PendingOperation p, int qpNum, int status, int opcode, int vendorErr, int byteLen,
            int imm, int wcFlags) {
        onCompletion(p, status, opcode, vendorErr, byteLen, imm, wcFlags);
    }

    /**
     * {@link #onCompletion} threw {@code error} for the entry that held {@code wrId}: free it if it was not
     * freed, fail what it stood for, and close. Poller thread.
     */
    default void completionHandlingFailed(PendingOperation p, long wrId, Throwable error) {
    }
}
