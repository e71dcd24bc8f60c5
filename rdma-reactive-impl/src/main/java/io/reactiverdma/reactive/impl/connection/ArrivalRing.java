package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

/**
 * A receive queue's arrived messages not delivered yet, in order: a ring of (buffer, index, generation,
 * length, immediate) in parallel arrays, so an arrival creates nothing. With its own buffers a connection never
 * has more arrivals than buffers; on a shared receive queue the ring grows if a peer without credits sends
 * more (allocation only then). Poller thread only.
 */
final class ArrivalRing {
    private EngineBuffer[] buffer;
    private int[] index;
    private int[] generation;
    private int[] length;
    private int[] immediate;
    private boolean[] withImmediate;
    private int head;
    private int count;

    ArrivalRing(int capacity) {
        allocate(Math.max(1, capacity));
    }

    private void allocate(int capacity) {
        EngineBuffer[] b = new EngineBuffer[capacity];
        int[] i = new int[capacity];
        int[] g = new int[capacity];
        int[] l = new int[capacity];
        int[] imm = new int[capacity];
        boolean[] withImm = new boolean[capacity];
        for (int k = 0; k < count; k++) { // the ring unrolled into the new arrays, oldest first
            int from = (head + k) % buffer.length;
            b[k] = buffer[from];
            i[k] = index[from];
            g[k] = generation[from];
            l[k] = length[from];
            imm[k] = immediate[from];
            withImm[k] = withImmediate[from];
        }
        buffer = b;
        index = i;
        generation = g;
        length = l;
        immediate = imm;
        withImmediate = withImm;
        head = 0;
    }

    int count() {
        return count;
    }

    /** {@code i} (below twice the length) as a position in the ring: no division per message. */
    private int wrap(int i) {
        return i >= buffer.length ? i - buffer.length : i;
    }

    void push(EngineBuffer b, int bufferIndex, int bufferGeneration, int messageLength, boolean hasImmediate, int imm) {
        if (count == buffer.length) {
            allocate(buffer.length * 2);
        }
        int at = wrap(head + count);
        buffer[at] = b;
        index[at] = bufferIndex;
        generation[at] = bufferGeneration;
        length[at] = messageLength;
        withImmediate[at] = hasImmediate;
        immediate[at] = hasImmediate ? imm : 0;
        count++;
    }

    /**
     * Takes the oldest arrival and returns its position: its fields stay readable there until the next
     * {@link #push}.
     */
    int pop() {
        int at = head;
        head = wrap(head + 1);
        count--;
        return at;
    }

    /** The buffer of the arrival at {@code at}, let go of (the ring keeps no reference to it). */
    EngineBuffer takeBuffer(int at) {
        EngineBuffer b = buffer[at];
        buffer[at] = null;
        return b;
    }

    int index(int at) {
        return index[at];
    }

    int generation(int at) {
        return generation[at];
    }

    int length(int at) {
        return length[at];
    }

    boolean withImmediate(int at) {
        return withImmediate[at];
    }

    int immediate(int at) {
        return immediate[at];
    }
}
