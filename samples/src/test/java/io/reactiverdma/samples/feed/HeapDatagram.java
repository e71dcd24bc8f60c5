package io.reactiverdma.samples.feed;

import io.reactiverdma.reactive.RdmaDatagramMessage;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/** A received datagram held on the heap, as a feed subscriber sees one; counts its releases. */
final class HeapDatagram implements RdmaDatagramMessage {
    private final ByteBuffer data;
    volatile int releases;

    HeapDatagram(ByteBuffer data) {
        this.data = data;
    }

    static HeapDatagram of(byte[] bytes) {
        return new HeapDatagram(ByteBuffer.wrap(bytes));
    }

    @Override
    public ByteBuffer data() {
        if (releases > 0) {
            throw new IllegalStateException("released");
        }
        return data.duplicate();
    }

    @Override
    public int length() {
        return data.remaining();
    }

    @Override
    public InetSocketAddress sender() {
        return new InetSocketAddress("10.0.0.9", 0);
    }

    @Override
    public int senderQpNumber() {
        return 0xffffff;
    }

    @Override
    public InetSocketAddress group() {
        return new InetSocketAddress("239.1.1.1", 0);
    }

    @Override
    public boolean hasImmediate() {
        return false;
    }

    @Override
    public int immediate() {
        return 0;
    }

    @Override
    public byte[] toByteArray() {
        byte[] a = new byte[data.remaining()];
        data().get(a);
        return a;
    }

    @Override
    public void release() {
        releases++;
    }
}
