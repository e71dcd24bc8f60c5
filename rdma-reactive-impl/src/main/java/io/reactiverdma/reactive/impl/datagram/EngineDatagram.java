package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/** A received datagram: a view of receive buffer {@code slot}, which goes back to the endpoint on release. */
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

    @Override
    public ByteBuffer data() {
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
        byte[] b = new byte[data.remaining()];
        data.duplicate().get(b);
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
