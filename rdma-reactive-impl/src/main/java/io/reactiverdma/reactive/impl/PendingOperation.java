package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.OperationType;

/**
 * One slot of {@link PendingOperations}: what the engine must do when the work request posted with
 * {@link #wrId()} completes. Reused: {@link PendingOperations#free} clears it.
 */
final class PendingOperation {
    final int slot;
    int generation = 1;
    boolean inUse;

    /** The connection that posted it, which the completion is delivered to. */
    CompletionTarget connection;
    OperationType type;
    /** The operation's subscriber-facing state (a send/one-sided op, or a receive buffer index). */
    Operation operation;
    /** For receives: the index of the connection's receive buffer. */
    int receiveIndex = -1;
    /** System.nanoTime() at post, for the latency timer. */
    long postedNs;

    PendingOperation(int slot) {
        this.slot = slot;
    }

    long wrId() {
        return ((long) generation << 32) | (slot & 0xffff_ffffL);
    }

    void clear() {
        connection = null;
        type = null;
        operation = null;
        receiveIndex = -1;
        postedNs = 0;
    }
}
