package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A received datagram: a handle on the receive buffer it landed in (40 bytes of GRH, then the payload),
 * stamped with that buffer's generation, as a connection's messages are. Each datagram is its own handle and
 * releases once (a compare-and-set, any thread), so a handle kept after {@link #release()} can neither release
 * nor read the buffer's next datagram (possibly another sender's); the receive side checks the stamp again
 * when the buffer comes back. The handle holds the receive memory until it is released, so it stays readable
 * after its endpoint closed. {@link #run()} is the hand-over of a release to the poller thread.
 */
final class EngineDatagram implements RdmaDatagramMessage, Runnable {
    private static final AtomicIntegerFieldUpdater<EngineDatagram> RELEASED =
            AtomicIntegerFieldUpdater.newUpdater(EngineDatagram.class, "released");

    private final DatagramReceiver receiver;
    private final EngineBuffer buffer;
    final int index;
    final int generation;
    private final int length;
    private final InetSocketAddress sender;
    private final int senderQpn;
    @Nullable
    private final InetSocketAddress group;
    private final boolean hasImmediate;
    private final int immediate;
    private volatile int released;

    EngineDatagram(DatagramReceiver receiver, EngineBuffer buffer, int index, int generation, int length,
            InetSocketAddress sender, int senderQpn, @Nullable InetSocketAddress group, boolean hasImmediate,
            int immediate) {
        this.receiver = receiver;
        this.buffer = buffer;
        this.index = index;
        this.generation = generation;
        this.length = length;
        this.sender = sender;
        this.senderQpn = senderQpn;
        this.group = group;
        this.hasImmediate = hasImmediate;
        this.immediate = hasImmediate ? immediate : 0;
    }

    /** Refused once released: the buffer may hold the next datagram by then, possibly another sender's. */
    @Override
    public ByteBuffer data() {
        if (released != 0) {
            throw releasedError();
        }
        return buffer.readOnlyMemory().slice(buffer.offset() + Grh.SIZE, length);
    }

    /** Copies the GRH (what a reply's address handle is made from) into {@code into}; false once released. */
    boolean copyGrh(byte[] into) {
        if (released != 0) {
            return false;
        }
        buffer.memory().get(buffer.offset(), into, 0, Grh.SIZE);
        return released == 0; // released meanwhile: the bytes may be the next datagram's
    }

    static InvalidRequestException releasedError() {
        return new InvalidRequestException(Reason.BUFFER_RELEASED, "the datagram was released: its receive buffer"
                + " may hold another datagram now");
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public InetSocketAddress sender() {
        return sender;
    }

    @Override
    public int senderQpNumber() {
        return senderQpn;
    }

    @Override
    @Nullable
    public InetSocketAddress group() {
        return group;
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

    DatagramReceiver receiver() {
        return receiver;
    }

    boolean isReleased() {
        return released != 0;
    }

    /** Gives the buffer back (the first call only; any thread). */
    @Override
    public void release() {
        if (RELEASED.compareAndSet(this, 0, 1)) {
            receiver.poller().run(this);
        }
    }

    /** Poller thread: the release reaches the receive side. */
    @Override
    public void run() {
        receiver.released(this);
    }

    @Override
    public String toString() {
        return "datagram of " + length + " bytes from " + sender.getAddress().getHostAddress() + " qpn " + senderQpn
                + (group != null ? " to group " + group.getAddress().getHostAddress() : "")
                + (released != 0 ? ", released" : "");
    }
}
