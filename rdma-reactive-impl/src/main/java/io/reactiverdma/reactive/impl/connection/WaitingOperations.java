package io.reactiverdma.reactive.impl.connection;

/**
 * A connection's operations waiting, in order, for a send-queue slot or a credit: an intrusive FIFO (the links
 * live in {@link Operation}), so that a cancel takes a waiting operation out in O(1) wherever it is. The
 * queue is unbounded (a peer that grants no credit makes it grow), and cancels run on the poller thread that
 * every connection of a shared completion queue depends on: a scan per cancel (as an array queue's
 * {@code remove} does) made mass timeouts quadratic there. Nothing is allocated per operation.
 *
 * <p>Not thread-safe: the connection's poller thread only.
 */
final class WaitingOperations {
    private Operation head;
    private Operation tail;
    private int size;

    void add(Operation op) {
        if (op.waiting) {
            throw new IllegalStateException(op.type + " is queued already");
        }
        op.waiting = true;
        op.previousWaiting = tail;
        op.nextWaiting = null;
        if (tail == null) {
            head = op;
        } else {
            tail.nextWaiting = op;
        }
        tail = op;
        size++;
    }

    Operation peek() {
        return head;
    }

    Operation poll() {
        Operation op = head;
        if (op != null) {
            unlink(op);
        }
        return op;
    }

    /** Takes {@code op} out if it waits here; returns whether it did. */
    boolean remove(Operation op) {
        if (!op.waiting) {
            return false;
        }
        unlink(op);
        return true;
    }

    int size() {
        return size;
    }

    private void unlink(Operation op) {
        Operation prev = op.previousWaiting;
        Operation next = op.nextWaiting;
        if (prev == null) {
            head = next;
        } else {
            prev.nextWaiting = next;
        }
        if (next == null) {
            tail = prev;
        } else {
            next.previousWaiting = prev;
        }
        op.previousWaiting = null;
        op.nextWaiting = null;
        op.waiting = false;
        size--;
    }
}
