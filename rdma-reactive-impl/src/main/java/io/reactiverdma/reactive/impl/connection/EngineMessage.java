package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.RdmaMessage;

import java.nio.ByteBuffer;

/**
 * One received message: a handle on the receive buffer it landed in, stamped with that buffer's
 * generation. Each message gets its own handle, so a reference kept after {@link #release()} (or a second
 * release, from a discard hook beside the engine's own) acts on nothing: it can never release or read the
 * next message that lands in the same buffer. The receive queue checks the stamp again when the buffer
 * comes back, so a mix-up inside the engine fails loudly instead of reposting a buffer in use.
 *
 * <p>{@link #run()} is the hand-over of a release to the connection's poller thread (the handle is its own
 * task, so releasing allocates nothing).
 */
final class EngineMessage extends SingleRelease implements RdmaMessage, Runnable {
    private final ReceiveQueue queue;
    private final EngineBuffer buffer;
    final int index;
    final int generation;
    private final int length;
    private final int immediate;
    private final boolean hasImmediate;

    EngineMessage(ReceiveQueue queue, EngineBuffer buffer, int index, int generation, int length,
            boolean hasImmediate, int immediate) {
        this.queue = queue;
        this.buffer = buffer;
        this.index = index;
        this.generation = generation;
        this.length = length;
        this.hasImmediate = hasImmediate;
        this.immediate = hasImmediate ? immediate : 0;
    }

    @Override
    public ByteBuffer data() {
        if (isReleased()) {
            throw EngineBuffer.released();
        }
        return buffer.readOnlyMemory().slice(buffer.offset(), length);
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public boolean hasImmediate() {
        return hasImmediate;
    }

    @Override
    public int immediate() {
        return immediate;
    }

    @Override
    public byte[] toByteArray() {
        byte[] b = new byte[length];
        data().get(b);
        return b;
    }

    /** Gives the buffer back (the first call only; any thread). */
    @Override
    public void release() {
        if (claimRelease()) {
            queue.poller().run(this);
        }
    }

    /** Poller thread: the release reaches the receive queue. */
    @Override
    public void run() {
        queue.released(this);
    }

    @Override
    public String toString() {
        return "RdmaMessage{" + length + " bytes" + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediate) : "")
                + (isReleased() ? ", released" : "") + "}";
    }
}
