package io.reactiverdma.reactive.impl.completion;


import io.reactiverdma.reactive.OperationType;

/**
 * One slot of {@link PendingOperations}: what the engine must do when the work request posted with
 * {@link #wrId()} completes. Reused: {@link PendingOperations#free} clears it.
 */
public final class PendingOperation {
    final int slot;
    int generation = 1;
    boolean inUse;

    /** The connection that posted it, which the completion is delivered to. */
    public CompletionTarget connection;
    public OperationType type;
    /** What the target needs to finish the work (the connection's operation object); null for a receive. */
    public Object operation;
    /** For receives: the index of the connection's receive buffer. */
    public int receiveIndex = -1;
    /** System.nanoTime() at post, for the latency timer. */
    public long postedNs;

    PendingOperation(int slot) {
        this.slot = slot;
    }

    public long wrId() {
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
