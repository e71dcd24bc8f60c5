package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-memory connection whose peer echoes (on its own thread, as a real peer's replies arrive on the
 * poller thread), and can misbehave on cue: corrupt a reply, drop one, or go away. Only what the echo client
 * uses is implemented.
 */
final class FakeEchoConnection implements RdmaConnection {
    private final Sinks.Many<RdmaMessage> inbox = Sinks.many().unicast().onBackpressureBuffer();
    private final Scheduler peer = Schedulers.newSingle("fake-echo-peer");
    private final int maxMessageSize;
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger repliesDelivered = new AtomicInteger();
    final AtomicInteger released = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    volatile int corruptReply = -1;
    volatile int corruptOffset;
    volatile int dropReply = -1;
    volatile int goAwayAfter = -1;

    FakeEchoConnection(int maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
    }

    @Override
    public Flux<RdmaMessage> receive() {
        return inbox.asFlux();
    }

    @Override
    public Mono<Void> send(ByteBuffer data) {
        return Mono.fromRunnable(() -> {
            byte[] copy = new byte[data.remaining()];
            data.duplicate().get(copy);
            int i = sent.getAndIncrement();
            maxInFlight.accumulateAndGet(i + 1 - repliesDelivered.get(), Math::max);
            peer.schedule(() -> reply(i, copy));
        });
    }

    private void reply(int i, byte[] copy) {
        if (i == goAwayAfter) {
            inbox.tryEmitComplete();
            return;
        }
        if (i == dropReply) {
            return;
        }
        if (i == corruptReply) {
            copy[corruptOffset] ^= 0x40;
        }
        repliesDelivered.incrementAndGet();
        inbox.tryEmitNext(new Message(copy));
    }

    @Override
    public Mono<Void> send(Publisher<ByteBuffer> messages) {
        return Flux.from(messages).concatMap(this::send).then();
    }

    @Override
    public int maxMessageSize() {
        return maxMessageSize;
    }

    @Override
    public InetSocketAddress remoteAddress() {
        return InetSocketAddress.createUnresolved("fake-peer", 7471);
    }

    @Override
    public InetSocketAddress localAddress() {
        return InetSocketAddress.createUnresolved("fake-local", 40000);
    }

    @Override
    public void dispose() {
        inbox.tryEmitComplete();
        peer.dispose();
    }

    private final class Message implements RdmaMessage {
        private final byte[] bytes;
        private boolean isReleased;

        Message(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public ByteBuffer data() {
            return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
        }

        @Override
        public int length() {
            return bytes.length;
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
            return bytes.clone();
        }

        @Override
        public synchronized void release() {
            if (!isReleased) {
                isReleased = true;
                released.incrementAndGet();
            }
        }
    }

    // ---- not used by the echo client
    @Override
    public Mono<Void> send(RegisteredBuffer data) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Void> sendWithImmediate(ByteBuffer data, int immediate) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Void> write(RegisteredBuffer local, RemoteRegion remote) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<io.reactiverdma.reactive.ExposedRegion> expose(RegisteredBuffer buffer,
            io.reactiverdma.reactive.RemoteAccess... access) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Void> writeWithImmediate(RegisteredBuffer local, RemoteRegion remote, int immediate) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Void> read(RegisteredBuffer local, RemoteRegion remote) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Long> compareAndSwap(RemoteRegion remote, long expect, long swap) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Mono<Long> fetchAndAdd(RemoteRegion remote, long delta) {
        throw new UnsupportedOperationException();
    }

    @Override
    public Flux<ConnectionEvent> events() {
        throw new UnsupportedOperationException();
    }

    @Override
    public RdmaMemory memory() {
        throw new UnsupportedOperationException();
    }

    @Override
    public boolean creditFlowControl() {
        return false;
    }

    @Override
    public Mono<Void> onDispose() {
        return Mono.empty();
    }
}
