package io.reactiverdma.reactive.impl;

/**
 * What a completion is delivered to: the connection that posted the work request. The poller calls it on
 * its own thread with the pending entry (still in use: the target frees it) and the completion's fields.
 */
interface CompletionTarget {
    void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags);
}
