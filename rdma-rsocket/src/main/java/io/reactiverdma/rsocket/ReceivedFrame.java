package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.reactiverdma.reactive.RdmaMessage;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A received frame as a Netty buffer over the registered receive buffer the RDMA message landed in: nothing
 * is copied. The message (and so the receive buffer, which the engine cannot post again until then) is
 * released when the buffer's reference count reaches zero, whoever (RSocket, or an application holding a
 * payload) releases it last; slices and duplicates share that count.
 *
 * <p>A one-component {@link CompositeByteBuf}: it is the public Netty buffer whose release can be hooked
 * ({@link #deallocate()}) and that accepts a read-only direct buffer, which a received message's
 * {@link RdmaMessage#data()} is.
 */
final class ReceivedFrame extends CompositeByteBuf {
    /** Frames not yet released, in this JVM: what tests check to prove no receive buffer is left held. */
    private static final AtomicInteger HELD = new AtomicInteger();

    private final RdmaMessage message;

    ReceivedFrame(ByteBufAllocator alloc, RdmaMessage message) {
        super(alloc, true, 1, Unpooled.wrappedBuffer(message.data()));
        this.message = message;
        HELD.incrementAndGet();
    }

    static int held() {
        return HELD.get();
    }

    @Override
    protected void deallocate() {
        try {
            super.deallocate();
        } finally {
            HELD.decrementAndGet();
            message.release();
        }
    }
}
