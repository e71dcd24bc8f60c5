package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaMessage;

import java.util.concurrent.ArrayBlockingQueue;

/**
 * One connection's free {@link ReceivedFrame} objects: a frame released to reference count zero comes back
 * here (from whichever thread released it) and carries a later message, so receiving makes no object per
 * frame once the connection has as many as it holds at once. First in, first out, so a freed object waits
 * behind the others before it is reused. Bounded: a connection holds at most its receive buffers' worth of
 * frames at a time, and what comes back beyond {@link #CAPACITY} is left to the garbage collector.
 *
 * <p>Taken from by the receive path only (one thread at a time: Reactive Streams serialises onNext); given
 * back to from any thread. An {@link ArrayBlockingQueue} allocates nothing to hand an object over (its lock
 * is uncontended but for a release racing the receive path).
 */
final class ReceivedFrames {
    /** The default receive queue depth (64) four times over: room for every frame a connection may hold. */
    static final int CAPACITY = 256;

    private final ByteBufAllocator alloc;
    private final ArrayBlockingQueue<ReceivedFrame> free = new ArrayBlockingQueue<>(CAPACITY);

    ReceivedFrames(ByteBufAllocator alloc) {
        this.alloc = alloc;
    }

    /** {@code message} as a frame of reference count 1: a free object when there is one, else a new one. */
    ReceivedFrame carry(RdmaMessage message) {
        ReceivedFrame frame = free.poll();
        if (frame == null) {
            frame = new ReceivedFrame(this, alloc);
        }
        return frame.carry(message);
    }

    /** A frame whose reference count reached zero (any thread). */
    void recycle(ReceivedFrame frame) {
        free.offer(frame);
    }
}
