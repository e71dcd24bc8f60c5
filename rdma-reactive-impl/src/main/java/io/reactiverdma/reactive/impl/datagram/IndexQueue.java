package io.reactiverdma.reactive.impl.datagram;

/**
 * A first-in first-out queue of buffer indices, at most {@code capacity} of them (each buffer is in it at most
 * once), over one preallocated array: the receive side's datagrams waiting to be routed, without an
 * allocation per datagram. One thread.
 */
final class IndexQueue {
    private final int[] indices;
    private int head;
    private int size;

    IndexQueue(int capacity) {
        this.indices = new int[capacity];
    }

    boolean isEmpty() {
        return size == 0;
    }

    void add(int index) {
        if (size == indices.length) {
            throw new IllegalStateException("more than " + indices.length + " indices queued");
        }
        indices[(head + size) % indices.length] = index;
        size++;
    }

    /** The oldest index, taken out. */
    int remove() {
        if (size == 0) {
            throw new IllegalStateException("no index queued");
        }
        int index = indices[head];
        head = (head + 1) % indices.length;
        size--;
        return index;
    }
}
