package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rsocket.DuplexConnection;
import io.rsocket.RSocketErrorException;
import io.rsocket.transport.ClientTransport;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client transport that counts what goes through it: connections opened, frames received over all of them.
 * What a resumable test logs to tell a crawl (frames keep arriving) from a stall (connections keep opening,
 * frames do not).
 */
final class CountingClientTransport implements ClientTransport {
    final AtomicLong connects = new AtomicLong();
    final AtomicLong framesReceived = new AtomicLong();
    private final ClientTransport delegate;

    CountingClientTransport(ClientTransport delegate) {
        this.delegate = delegate;
    }

    @Override
    public int maxFrameLength() {
        return delegate.maxFrameLength();
    }

    @Override
    public Mono<DuplexConnection> connect() {
        return delegate.connect().map(c -> {
            connects.incrementAndGet();
            return new Counted(c);
        });
    }

    /** How many connections log their timeline (the first ones of a test). */
    private static final int TIMELINES = 12;
    private final long createdNanos = System.nanoTime();

    private long ms(long nanos) {
        return (nanos - createdNanos) / 1_000_000;
    }

    private final class Counted implements DuplexConnection {
        private final DuplexConnection connection;
        private final long number = connects.get();
        private final long openedNanos = System.nanoTime();
        private final AtomicLong frames = new AtomicLong();
        private volatile long firstFrameNanos;
        private volatile long disposedNanos;
        private volatile long receiveEndedNanos;

        Counted(DuplexConnection connection) {
            this.connection = connection;
            if (number <= TIMELINES) {
                connection.onClose().doFinally(s -> System.err.println("[transport-suite] connection " + number
                        + ": opened at " + ms(openedNanos) + " ms, first frame " + at(firstFrameNanos)
                        + ", dispose called " + at(disposedNanos) + ", receive ended " + at(receiveEndedNanos)
                        + ", closed at " + ms(System.nanoTime()) + " ms, " + frames.get() + " frames received"))
                        .subscribe(v -> { }, e -> { });
            }
        }

        private String at(long nanos) {
            return nanos == 0 ? "never" : "at " + ms(nanos) + " ms";
        }

        @Override
        public void sendFrame(int streamId, ByteBuf frame) {
            connection.sendFrame(streamId, frame);
        }

        @Override
        public void sendErrorAndClose(RSocketErrorException e) {
            connection.sendErrorAndClose(e);
        }

        @Override
        public Flux<ByteBuf> receive() {
            return connection.receive().doOnNext(f -> {
                if (frames.getAndIncrement() == 0) {
                    firstFrameNanos = System.nanoTime();
                }
                framesReceived.incrementAndGet();
            }).doFinally(s -> receiveEndedNanos = System.nanoTime());
        }

        @Override
        public ByteBufAllocator alloc() {
            return connection.alloc();
        }

        @Override
        public SocketAddress remoteAddress() {
            return connection.remoteAddress();
        }

        @Override
        public Mono<Void> onClose() {
            return connection.onClose();
        }

        @Override
        public void dispose() {
            if (disposedNanos == 0) {
                disposedNanos = System.nanoTime();
            }
            connection.dispose();
        }

        @Override
        public boolean isDisposed() {
            return connection.isDisposed();
        }
    }
}
