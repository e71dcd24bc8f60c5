package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rsocket.internal.UnboundedProcessor;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Fuseable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.function.IntConsumer;

/**
 * The frames RSocket queues on a connection ({@link io.rsocket.internal.BaseDuplexConnection}'s sender), as
 * the {@link ByteBuffer}s the RDMA connection's streaming send takes: one frame, one message. The streaming
 * send copies each message into its registered staging slot inside {@code onNext}, so a frame is released
 * as soon as that returns. A frame that is one contiguous buffer is handed over as a view of it (no copy
 * here); a frame made of several buffers (RSocket builds header, metadata and data as a composite) is first
 * gathered into one reusable scratch buffer: one copy, and no object per frame either way.
 *
 * <p>The sender is read as a queue (Reactor's asynchronous fusion, the way Reactor Netty reads it for
 * RSocket over TCP): this class polls as many frames as the send asked for, and the sender only says that
 * frames arrived. Why not the sender's own {@code request(n)} path: with the few frames at a time a
 * streaming send asks for, it sometimes kept the final frame of {@code sendErrorAndClose} (RSocket's
 * {@code dispose()}) and the end of the frames although they had been asked for, so the connection never
 * closed (FrameWriterTest).
 *
 * <p>A frame larger than the peer's receive buffers is not handed over: it is released, {@code tooLarge}
 * is told its size (the connection then ends with a connection error) and the next frame takes its place.
 */
final class FrameWriter extends Flux<ByteBuffer> {
    private final UnboundedProcessor frames;
    private final int maxFrameLength;
    private final IntConsumer tooLarge;

    FrameWriter(UnboundedProcessor frames, int maxFrameLength, IntConsumer tooLarge) {
        this.frames = frames;
        this.maxFrameLength = maxFrameLength;
        this.tooLarge = tooLarge;
    }

    @Override
    public void subscribe(CoreSubscriber<? super ByteBuffer> actual) {
        frames.subscribe(new Writer(actual, maxFrameLength, tooLarge));
    }

    private static final class Writer implements CoreSubscriber<ByteBuf>, Subscription {
        private static final AtomicLongFieldUpdater<Writer> REQUESTED =
                AtomicLongFieldUpdater.newUpdater(Writer.class, "requested");
        private static final AtomicIntegerFieldUpdater<Writer> WIP =
                AtomicIntegerFieldUpdater.newUpdater(Writer.class, "wip");

        private final CoreSubscriber<? super ByteBuffer> actual;
        private final int maxFrameLength;
        private final IntConsumer tooLarge;
        private Subscription upstream;
        private Fuseable.QueueSubscription<ByteBuf> queue;
        private volatile long requested;
        /** Drain guard: one thread at a time polls the queue (and only that thread clears it, once). */
        private volatile int wip;
        private volatile boolean done;
        private volatile boolean cancelled;
        private Throwable error;
        /** Drain thread only: the queue was cleared and the end signalled. */
        private boolean finished;
        /** Grown on demand up to the largest frame seen (never beyond maxFrameLength); drain thread only. */
        private ByteBuffer scratch;
        /**
         * {@link #scratch} as a Netty buffer, what a composite frame is gathered into: Netty's direct
         * buffers copy into another Netty buffer through its cached internal view (or its memory address),
         * where a copy into a {@code ByteBuffer} makes a duplicate of the source per component when Netty
         * runs without {@code sun.misc.Unsafe} (its default on JDK 24 and later).
         */
        private ByteBuf gather;

        Writer(CoreSubscriber<? super ByteBuffer> actual, int maxFrameLength, IntConsumer tooLarge) {
            this.actual = actual;
            this.maxFrameLength = maxFrameLength;
            this.tooLarge = tooLarge;
        }

        @Override
        public Context currentContext() {
            return actual.currentContext();
        }

        @Override
        @SuppressWarnings("unchecked")
        public void onSubscribe(Subscription s) {
            if (!Operators.validate(upstream, s)) {
                return;
            }
            upstream = s;
            if (!(s instanceof Fuseable.QueueSubscription)
                    || ((Fuseable.QueueSubscription<ByteBuf>) s).requestFusion(Fuseable.ASYNC) != Fuseable.ASYNC) {
                s.cancel();
                actual.onSubscribe(Operators.emptySubscription());
                actual.onError(new IllegalStateException("the connection's sender does not fuse: " + s));
                return;
            }
            queue = (Fuseable.QueueSubscription<ByteBuf>) s;
            actual.onSubscribe(this);
        }

        /** Fused: frames were queued (the argument is null). */
        @Override
        public void onNext(ByteBuf ignored) {
            drain();
        }

        @Override
        public void onError(Throwable t) {
            error = t;
            done = true;
            drain();
        }

        @Override
        public void onComplete() {
            done = true;
            drain();
        }

        @Override
        public void request(long n) {
            if (Operators.validate(n)) {
                Operators.addCap(REQUESTED, this, n);
                drain();
            }
        }

        @Override
        public void cancel() {
            cancelled = true;
            upstream.cancel();
            drain();
        }

        private void drain() {
            if (WIP.getAndIncrement(this) != 0) {
                return;
            }
            int missed = 1;
            do {
                if (finished) {
                    return;
                }
                long r = requested;
                long e = 0;
                while (e != r) {
                    if (cancelled) {
                        finish(false);
                        return;
                    }
                    boolean d = done; // read before poll: a frame queued before the end is never missed
                    if (d && error != null) {
                        finish(true);
                        return;
                    }
                    ByteBuf frame = queue.poll();
                    if (frame == null) {
                        if (d) {
                            finish(true);
                            return;
                        }
                        break;
                    }
                    if (write(frame)) {
                        e++;
                    }
                }
                if (cancelled) {
                    finish(false);
                    return;
                }
                if (e != 0) {
                    REQUESTED.addAndGet(this, -e);
                }
                missed = WIP.addAndGet(this, -missed);
            } while (missed != 0);
        }

        /** Hands {@code frame} to the send (and releases it); false when it was too large and dropped. */
        private boolean write(ByteBuf frame) {
            int n = frame.readableBytes();
            try {
                if (n > maxFrameLength) {
                    tooLarge.accept(n);
                    return false;
                }
                actual.onNext(view(frame, n));
                return true;
            } finally {
                frame.release();
            }
        }

        /** Releases what is still queued (which also lets the sender report the connection closed), then ends. */
        private void finish(boolean signal) {
            finished = true;
            queue.clear();
            if (signal) {
                Throwable t = error;
                if (t != null) {
                    actual.onError(t);
                } else {
                    actual.onComplete();
                }
            }
        }

        private ByteBuffer view(ByteBuf frame, int n) {
            if (frame.nioBufferCount() == 1) {
                return frame.internalNioBuffer(frame.readerIndex(), n);
            }
            if (scratch == null || scratch.capacity() < n) {
                scratch = ByteBuffer.allocateDirect(Math.min(maxFrameLength, Math.max(n, 4096)));
                gather = Unpooled.wrappedBuffer(scratch); // not released: it frees nothing, scratch is the GC's
            }
            frame.getBytes(frame.readerIndex(), gather, 0, n);
            return scratch.clear().limit(n);
        }
    }
}
