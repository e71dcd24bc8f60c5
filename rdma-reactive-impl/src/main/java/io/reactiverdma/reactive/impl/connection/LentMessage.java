package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaMessage;

import java.nio.ByteBuffer;

/**
 * The flyweight a decoding {@code receive(decoder)} subscriber is lent: one per connection, reused for
 * every message, with one read-only view per receive buffer made once (a connection on a shared receive
 * queue gets a new view per message: the SRQ's buffers are not its own). It is valid only during the
 * decoder's call (the receive queue reposts the buffer right after): outside it every accessor throws, so a
 * decoder that kept it fails loudly instead of reading the next message that lands in the buffer.
 * {@link #release()} does nothing: the engine takes the buffer back itself. Poller thread only.
 */
final class LentMessage implements RdmaMessage {
    private final ByteBuffer[] views;
    private ByteBuffer view;
    private int length;
    private boolean hasImmediate;
    private int immediate;

    LentMessage(EngineBuffer[] buffers) {
        views = new ByteBuffer[buffers.length];
        for (int i = 0; i < buffers.length; i++) {
            EngineBuffer b = buffers[i];
            views[i] = b.readOnlyMemory().slice(b.offset(), b.length());
        }
    }

    /**
     * Points the flyweight at the message in this connection's buffer {@code index} for one decoder call, or,
     * when {@code shared} is not null, in that buffer of a shared receive queue (whose view is made now).
     */
    LentMessage lend(EngineBuffer shared, int index, int length, boolean hasImmediate, int immediate) {
        ByteBuffer v = shared == null ? views[index]
                : shared.readOnlyMemory().slice(shared.offset(), shared.length());
        v.limit(length).position(0);
        this.view = v;
        this.length = length;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
        return this;
    }

    /** The decoder returned: the message is gone. */
    void end() {
        view = null;
    }

    private ByteBuffer current() {
        ByteBuffer v = view;
        if (v == null) {
            throw new InvalidRequestException(InvalidRequestException.Reason.BUFFER_RELEASED,
                    "a message lent to a receive decoder was used after the decoder returned (copy what you need "
                            + "inside the decoder)");
        }
        return v;
    }

    /** The message's bytes: position 0, limit its length, read only, big-endian. The same view each call. */
    @Override
    public ByteBuffer data() {
        return current();
    }

    @Override
    public int length() {
        current();
        return length;
    }

    @Override
    public boolean hasImmediate() {
        current();
        return hasImmediate;
    }

    @Override
    public int immediate() {
        current();
        return immediate;
    }

    @Override
    public byte[] toByteArray() {
        ByteBuffer v = current();
        byte[] b = new byte[length];
        v.get(0, b);
        return b;
    }

    /** Nothing to do: the receive queue takes the buffer back when the decoder returns. */
    @Override
    public void release() {
    }

    @Override
    public String toString() {
        return view == null ? "RdmaMessage{lent, ended}" : "RdmaMessage{lent, " + length + " bytes}";
    }
}
