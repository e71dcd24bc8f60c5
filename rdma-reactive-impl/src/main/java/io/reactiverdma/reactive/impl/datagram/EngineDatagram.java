package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A received datagram: a view of receive buffer {@code slot}, which goes back to the endpoint on release.
 * Each datagram is its own handle and releases once (a CAS), so a handle kept after release can neither
 * release nor read the buffer's next datagram.
 */
final class EngineDatagram implements RdmaDatagramMessage {
    private final EngineDatagramEndpoint endpoint;
    final int slot;
    private final ByteBuffer data;
    private final InetSocketAddress sender;
    private final int senderQpn;
    @Nullable
    private final InetSocketAddress group;
    private final boolean hasImmediate;
    private final int immediate;
    private final AtomicBoolean released = new AtomicBoolean();

    EngineDatagram(EngineDatagramEndpoint endpoint, int slot, ByteBuffer data, InetSocketAddress sender, int senderQpn,
            @Nullable InetSocketAddress group, boolean hasImmediate, int immediate) {
        this.endpoint = endpoint;
        this.slot = slot;
        this.data = data;
        this.sender = sender;
        this.senderQpn = senderQpn;
        this.group = group;
        this.hasImmediate = hasImmediate;
        this.immediate = immediate;
    }

    /** Refused once released: the buffer may hold the next datagram by then, possibly another sender's. */
    @Override
    public ByteBuffer data() {
        if (released.get()) {
            throw new InvalidRequestException(Reason.BUFFER_RELEASED, "the datagram was released: its receive buffer"
                    + " may hold another datagram now");
        }
        return data.duplicate();
    }

    @Override
    public int length() {
        return data.remaining();
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
        ByteBuffer view = data();
        byte[] b = new byte[view.remaining()];
        view.get(b);
        return b;
    }

    EngineDatagramEndpoint endpoint() {
        return endpoint;
    }

    boolean isReleased() {
        return released.get();
    }

    @Override
    public void release() {
        if (released.compareAndSet(false, true)) {
            endpoint.returnReceiveBuffer(slot);
        }
    }

    @Override
    public String toString() {
        return "datagram of " + length() + " bytes from " + sender.getAddress().getHostAddress() + " qpn " + senderQpn
                + (group != null ? " to group " + group.getAddress().getHostAddress() : "");
    }
}
