package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaMessage;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A received message: a view on one of the connection's receive buffers. One instance per receive buffer
 * is allocated with the connection and reused for each message that lands in that buffer, so receiving
 * allocates nothing per completion; an instance must therefore not be used after {@link #release()}.
 */
final class EngineMessage implements RdmaMessage {
    private final EngineConnection connection;
    private final int index;
    private final EngineBuffer buffer;
    private final AtomicBoolean released = new AtomicBoolean(true);
    private int length;
    private int immediate;
    private boolean hasImmediate;

    EngineMessage(EngineConnection connection, int index, EngineBuffer buffer) {
        this.connection = connection;
        this.index = index;
        this.buffer = buffer;
    }

    /** Fills the view for a new message (poller thread, before it is emitted). */
    EngineMessage reuse(int length, boolean hasImmediate, int immediate) {
        this.length = length;
        this.hasImmediate = hasImmediate;
        this.immediate = hasImmediate ? immediate : 0;
        released.set(false);
        return this;
    }

    @Override
    public ByteBuffer data() {
        if (released.get()) {
            throw EngineBuffer.released();
        }
        return buffer.memory().slice(buffer.offset(), length).asReadOnlyBuffer().order(ByteOrder.BIG_ENDIAN);
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

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            connection.receiveBufferReleased(index);
        }
    }

    boolean isReleased() {
        return released.get();
    }

    @Override
    public String toString() {
        return "RdmaMessage{" + length + " bytes" + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediate) : "")
                + (released.get() ? ", released" : "") + "}";
    }
}
