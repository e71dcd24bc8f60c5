package io.reactiverdma.reactive.impl.completion;


import io.reactiverdma.reactive.OperationType;

import java.util.Arrays;

/**
 * The work requests posted to one completion queue and not completed yet, indexed by {@code wr_id}. A
 * {@code wr_id} encodes a slot and that slot's generation:
 * <pre>
 *   wr_id = generation (high 32 bits) | slot (low 32 bits)
 * </pre>
 * Freeing a slot bumps its generation, so a completion whose {@code wr_id} names an old generation (stale:
 * its slot was reused) or a slot that is free (duplicate) is detected and counted, never delivered to the
 * operation that holds the slot now. Entries are allocated once, with the table: taking and freeing them
 * allocates nothing.
 *
 * <p>Not thread-safe, and takes no lock: the table belongs to its CQ's poller thread, which alone posts
 * (acquire), dispatches completions (lookup) and frees entries, for every connection on the CQ. (After that
 * thread has ended, the tasks still handed to it run one at a time under the poller's own monitor.)
 */
public final class PendingOperations {
    private final PendingOperation[] entries;
    private final int[] freeSlots;
    private int freeCount;
    private long staleCompletions;

    PendingOperations(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1, got " + capacity);
        }
        entries = new PendingOperation[capacity];
        freeSlots = new int[capacity];
        for (int i = 0; i < capacity; i++) {
            entries[i] = new PendingOperation(i);
            freeSlots[i] = capacity - 1 - i; // slot 0 is taken first
        }
        freeCount = capacity;
    }

    int capacity() {
        return entries.length;
    }

    /** Slots in use. */
    int inUse() {
        return entries.length - freeCount;
    }

    /**
     * Takes a free entry (its {@link PendingOperation#wrId()} is the {@code wr_id} to post with).
     *
     * @throws IllegalStateException when every slot is in use: the CQ's reservations make that a bug
     */
    PendingOperation acquire() {
        if (freeCount == 0) {
            throw new IllegalStateException("all " + entries.length + " pending-operation slots are in use");
        }
        PendingOperation e = entries[freeSlots[--freeCount]];
        e.inUse = true;
        return e;
    }

    /** Takes a free entry and fills it, under the table's lock (see the class comment). */
    public PendingOperation acquire(CompletionTarget target, OperationType type, Object operation,
            int receiveIndex, long postedNs) {
        PendingOperation e = acquire();
        e.connection = target;
        e.type = type;
        e.operation = operation;
        e.receiveIndex = receiveIndex;
        e.postedNs = postedNs;
        return e;
    }

    /** Frees {@code e} if it still holds {@code wrId} (not freed since); returns its operation then, else null. */
    public Object freeIfCurrent(PendingOperation e, long wrId) {
        if (!e.inUse || e.wrId() != wrId) {
            return null;
        }
        Object op = e.operation;
        free(e);
        return op;
    }

    /** Clears the entry, bumps its generation and makes its slot free. Freeing a free entry is a bug. */
    public void free(PendingOperation e) {
        if (!e.inUse) {
            throw new IllegalStateException("slot " + e.slot + " freed twice");
        }
        e.clear();
        e.inUse = false;
        e.generation++;
        freeSlots[freeCount++] = e.slot;
    }

    /**
     * The entry a completion's {@code wr_id} names, or null when the {@code wr_id} is stale, duplicate or
     * not one of this table's (counted in {@link #staleCompletions()}).
     */
    PendingOperation lookup(long wrId) {
        long slot = wrId & 0xffff_ffffL;
        int generation = (int) (wrId >>> 32);
        if (slot >= entries.length) {
            staleCompletions++;
            return null;
        }
        PendingOperation e = entries[(int) slot];
        if (!e.inUse || e.generation != generation) {
            staleCompletions++;
            return null;
        }
        return e;
    }

    /** Completions that named no live entry (stale generation, free slot, or foreign wr_id). */
    long staleCompletions() {
        return staleCompletions;
    }

    /** The entries in use now (allocates; for close paths and tests). */
    public PendingOperation[] snapshotInUse() {
        return Arrays.stream(entries).filter(e -> e.inUse).toArray(PendingOperation[]::new);
    }
}
