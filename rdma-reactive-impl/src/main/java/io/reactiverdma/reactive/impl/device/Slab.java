package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;

/**
 * One registered slab of the pool, carved into chunks of one size class: its free chunks (a stack, all
 * preallocated: handing one out or taking one back allocates nothing) and its place in one of the pool's
 * lists (partly used, or idle). Guarded by the pool's monitor.
 */
final class Slab {
    final ByteBuffer memory;
    final Registration registration;
    final int chunkSize;
    private final BufferPool.Chunk[] free;
    private int freeCount;
    /** {@link System#nanoTime()} when its last held chunk came back; meaningful while idle. */
    long idleSince;
    /** The list it is on (null: full, or released) and its neighbours there. */
    List list;
    Slab prev;
    Slab next;

    Slab(ByteBuffer memory, Registration registration, int chunkSize) {
        this.memory = memory;
        this.registration = registration;
        this.chunkSize = chunkSize;
        int n = memory.capacity() / chunkSize;
        free = new BufferPool.Chunk[n];
        for (int i = 0; i < n; i++) {
            free[i] = new BufferPool.Chunk(this, (n - 1 - i) * chunkSize); // lowest offset handed out first
        }
        freeCount = n;
    }

    int bytes() {
        return memory.capacity();
    }

    BufferPool.Chunk take() {
        return free[--freeCount];
    }

    void give(BufferPool.Chunk c) {
        free[freeCount++] = c;
    }

    boolean full() {
        return freeCount == 0;
    }

    /** No chunk of it is held: it may be released. */
    boolean idle() {
        return freeCount == free.length;
    }

    /** An intrusive doubly linked list of slabs (no node allocation on the recycle path). */
    static final class List {
        Slab head;
        Slab tail;

        boolean isEmpty() {
            return head == null;
        }

        void addLast(Slab s) {
            s.list = this;
            s.prev = tail;
            s.next = null;
            if (tail == null) {
                head = s;
            } else {
                tail.next = s;
            }
            tail = s;
        }

        void remove(Slab s) {
            if (s.prev == null) {
                head = s.next;
            } else {
                s.prev.next = s.next;
            }
            if (s.next == null) {
                tail = s.prev;
            } else {
                s.next.prev = s.prev;
            }
            s.list = null;
            s.prev = null;
            s.next = null;
        }
    }
}
