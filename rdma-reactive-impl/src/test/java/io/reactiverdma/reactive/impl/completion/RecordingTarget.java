package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.OperationType;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link CompletionTarget} that records what the poller delivers to it and then frees the entry, as a
 * connection does. Records are copied out of the entry before it is freed (freeing clears it).
 */
final class RecordingTarget implements CompletionTarget {
    /** One delivered completion: the entry's identity and contents at delivery, and the completion's fields. */
    record Delivery(PendingOperation entry, int slot, int generation, OperationType type, int tag, int status,
            int opcode, int vendorErr, int byteLen, int imm, int wcFlags, Thread thread) {
    }

    private final PendingOperations pending;
    final List<Delivery> deliveries = new CopyOnWriteArrayList<>();

    RecordingTarget(PendingOperations pending) {
        this.pending = pending;
    }

    /** Takes an entry for this target as a connection does when posting; {@code tag} identifies it. */
    PendingOperation post(OperationType type, int tag) {
        return pending.acquire(this, type, null, tag, System.nanoTime());
    }

    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm,
            int wcFlags) {
        if (!p.inUse) {
            throw new AssertionError("delivered a free entry");
        }
        deliveries.add(new Delivery(p, p.slot, p.generation, p.type, p.receiveIndex, status, opcode, vendorErr,
                byteLen, imm, wcFlags, Thread.currentThread()));
        pending.free(p);
    }
}
