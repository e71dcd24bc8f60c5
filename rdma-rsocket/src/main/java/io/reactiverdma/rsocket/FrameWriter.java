package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import java.nio.ByteBuffer;
import java.util.function.IntConsumer;

/**
 * The frames RSocket sends, as the {@link ByteBuffer}s the RDMA connection's streaming send takes: one frame,
 * one message. The streaming send copies each message into its registered staging slot inside
 * {@code onNext}, so a frame is released as soon as that returns. A frame that is one contiguous buffer is
 * handed over as a view of it (no copy here); a frame made of several buffers (RSocket builds header,
 * metadata and data as a composite) is first gathered into one reusable scratch buffer: one copy, and no
 * object per frame either way.
 *
 * <p>A frame larger than the peer's receive buffers is not handed over: it is released, {@code tooLarge}
 * is told its size (the connection then ends with a connection error) and one more frame is requested in
 * its place, so the send's demand accounting stays exact.
 */
final class FrameWriter extends Flux<ByteBuffer> {
    private final Publisher<ByteBuf> frames;
    private final int maxFrameLength;
    private final IntConsumer tooLarge;

    FrameWriter(Publisher<ByteBuf> frames, int maxFrameLength, IntConsumer tooLarge) {
        this.frames = frames;
        this.maxFrameLength = maxFrameLength;
        this.tooLarge = tooLarge;
    }

    @Override
    public void subscribe(CoreSubscriber<? super ByteBuffer> actual) {
        frames.subscribe(new Writer(actual, maxFrameLength, tooLarge));
    }

    private static final class Writer implements CoreSubscriber<ByteBuf>, Subscription {
        private final CoreSubscriber<? super ByteBuffer> actual;
        private final int maxFrameLength;
        private final IntConsumer tooLarge;
        private Subscription upstream;
        /** Grown on demand up to the largest frame seen (never beyond maxFrameLength); onNext is serial. */
        private ByteBuffer scratch;

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
        public void onSubscribe(Subscription s) {
            if (Operators.validate(upstream, s)) {
                upstream = s;
                actual.onSubscribe(this);
            }
        }

        @Override
        public void onNext(ByteBuf frame) {
            int n = frame.readableBytes();
            if (n > maxFrameLength) {
                frame.release();
                tooLarge.accept(n);
                upstream.request(1);
                return;
            }
            try {
                actual.onNext(view(frame, n));
            } finally {
                frame.release();
            }
        }

        private ByteBuffer view(ByteBuf frame, int n) {
            if (frame.nioBufferCount() == 1) {
                return frame.internalNioBuffer(frame.readerIndex(), n);
            }
            if (scratch == null || scratch.capacity() < n) {
                scratch = ByteBuffer.allocateDirect(Math.min(maxFrameLength, Math.max(n, 4096)));
            }
            scratch.clear().limit(n);
            frame.getBytes(frame.readerIndex(), scratch);
            return scratch.flip();
        }

        @Override
        public void onError(Throwable t) {
            actual.onError(t);
        }

        @Override
        public void onComplete() {
            actual.onComplete();
        }

        @Override
        public void request(long n) {
            upstream.request(n);
        }

        @Override
        public void cancel() {
            upstream.cancel();
        }
    }
}
