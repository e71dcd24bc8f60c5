package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMetricsRecorder;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SharedReceiveQueueContract} on the loopback device (40 connections, an SRQ of 80), and what only the
 * loopback can show: these tests count RNR waits, read the SRQ's posted buffers and limit events, or send
 * without credit as a hostile peer, none of which rxe exposes.
 *
 * <p>A server with a shared receive queue on the loopback device, end to end: many connections whose server
 * side asks for messages in random amounts and releases them after random delays (out of order), one of them
 * a slow consumer; every message is checked on arrival and echoed back and checked again. With credits no
 * send meets RNR (the loopback counts every one), the slow consumer does not hold up the others, and the
 * server's pinned receive memory (its {@code receiveMemoryChanged} meter) is the SRQ's depth times the
 * buffer size, whatever the number of connections; without SRQ it is that per connection.
 */
@Timeout(120)
class SharedReceiveQueueLoopbackTest extends SharedReceiveQueueContract {
    static final Duration WAIT = Duration.ofSeconds(60);

    private final LoopbackStackFixture fixture = new LoopbackStackFixture(WAIT);
    private final LoopbackStack stack = fixture.stack();
    private final RdmaEngine engine = fixture.engine();
    private DisposableRdmaServer server;

    /** Only the receive memory matters here; it keeps the current and the highest value. */
    static final class MemoryRecorder implements RdmaMetricsRecorder {
        final AtomicLong current = new AtomicLong();
        final AtomicLong max = new AtomicLong();

        @Override
        public void receiveMemoryChanged(String device, long deltaBytes) {
            max.accumulateAndGet(current.addAndGet(deltaBytes), Math::max);
        }

        @Override
        public void recordOperation(String device, InetSocketAddress remote, OperationType op, Outcome outcome,
                long latencyNanos, long bytes) {
        }

        @Override
        public void recordCompletionError(String device, InetSocketAddress remote, String status) {
        }

        @Override
        public void recordPollBatch(String device, int completions) {
        }

        @Override
        public void recordStaleCompletion(String device) {
        }

        @Override
        public void outstandingChanged(String device, InetSocketAddress remote, int delta) {
        }

        @Override
        public void connectionsChanged(String device, InetSocketAddress remote, int delta) {
        }

        @Override
        public void creditsWaitingChanged(String device, InetSocketAddress remote, int delta) {
        }
    }

    @Override
    protected StackFixture stack() {
        return fixture;
    }

    @Override
    protected int connections() {
        return 40;
    }

    @Override
    protected int srqDepth() {
        return 80;
    }

    @Override
    protected void closeStack() {
        try {
            if (server != null) {
                server.disposeNow(Duration.ofSeconds(15));
            }
        } finally {
            super.closeStack();
        }
    }

    static ByteBuffer message(int conn, int seq) {
        return ByteBuffer.allocate(16).putInt(0, conn).putInt(4, seq).putLong(8, checksum(conn, seq));
    }

    static long checksum(int conn, int seq) {
        return (conn * 0x9E3779B97F4A7C15L) ^ (seq * 0xC2B2AE3D27D4EB4FL) ^ 0x5DEECE66DL;
    }

    /** The server side: random demand, out-of-order releases after random delays, echo; checks order. */
    static Mono<Void> handle(RdmaConnection c, int index, long seed, Queue<String> errors) {
        Random r = new Random(seed + index);
        boolean slow = index == 0;
        int rate = 1 + r.nextInt(8);
        int concurrency = slow ? 64 : 1 + r.nextInt(8);
        AtomicInteger expected = new AtomicInteger(-1);
        return c.receive().limitRate(rate).flatMap(m -> {
            ByteBuffer b = ByteBuffer.wrap(m.toByteArray());
            int conn = b.getInt(0);
            int seq = b.getInt(4);
            if (b.capacity() != 16 || b.getLong(8) != checksum(conn, seq)) {
                errors.add("corrupt message on server connection " + index);
            }
            int first = expected.compareAndExchange(-1, conn) == -1 ? conn : expected.get();
            if (first != conn) {
                errors.add("connection " + index + " got a message of client " + conn + " after one of " + first);
            }
            Duration hold = Duration.ofMillis(slow ? 40 : r.nextInt(3));
            return Mono.delay(hold).then(Mono.fromRunnable(m::release)).then(c.send(b));
        }, concurrency).then();
    }

    /** One client: n checked messages out, their n echoes checked back. */
    static Mono<Void> exchange(RdmaEngine engine, RdmaTransportConfig config, int conn, int n, Queue<String> errors) {
        return engine.connect(config).flatMap(c -> {
            Mono<Long> echoes = c.receive().take(n).map(m -> {
                ByteBuffer b = ByteBuffer.wrap(m.toByteArray());
                m.release();
                if (b.capacity() != 16 || b.getInt(0) != conn || b.getLong(8) != checksum(conn, b.getInt(4))) {
                    errors.add("corrupt echo on client " + conn);
                }
                return b.getInt(4);
            }).distinct().count();
            Mono<Void> sends = Flux.range(0, n).concatMap(i -> c.send(message(conn, i)), 4).then();
            return Mono.zip(echoes, sends.thenReturn(true)).map(t -> {
                if (t.getT1() != n) {
                    errors.add("client " + conn + " got " + t.getT1() + " distinct echoes of " + n);
                }
                return t.getT1();
            }).doFinally(s -> c.dispose()).then(c.onDispose());
        });
    }

    private long run(int connections, int messages, int srqDepth, int perConnection, MemoryRecorder memory) {
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicInteger index = new AtomicInteger();
        long seed = new Random().nextLong();
        RdmaTransportConfig base = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER)
                .withOption(RdmaOption.SEND_QUEUE_DEPTH, 16);
        RdmaTransportConfig serverConfig = base.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, srqDepth)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, perConnection).withMetrics(true, () -> memory);
        server = engine.bind(serverConfig, c -> handle(c, index.getAndIncrement(), seed, errors)).block(WAIT);
        assertNotNull(server);
        RdmaTransportConfig clientConfig = base.withPort(server.port());
        long rnrBefore = stack.rnrWaits();
        Flux.range(0, connections).flatMap(i -> exchange(engine, clientConfig, i, messages, errors))
                .then().block(WAIT);
        assertEquals(List.of(), List.copyOf(errors), "seed " + seed);
        assertEquals(0, stack.rnrWaits() - rnrBefore, "sends that met RNR (seed " + seed + ")");
        long peak = memory.max.get();
        server.disposeNow(Duration.ofSeconds(15));
        server = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (memory.current.get() != 0 && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertEquals(0, memory.current.get(), "receive memory given back after the server closed");
        return peak;
    }

    @Test
    void manyConnectionsRandomDemandNoRnrAndMemoryBoundBySrqDepth() {
        MemoryRecorder memory = new MemoryRecorder();
        long peak = run(40, 60, 32, 8, memory);
        assertEquals(32L * BUFFER, peak, "pinned receive memory: the SRQ's 32 buffers, not 40 x 8");
    }

    /**
     * Two servers of one SHARED_RECEIVE_QUEUE_GROUP pin one SRQ between them, which stays while either is
     * bound; a server of that group with another depth gets no connection.
     */
    @Test
    void serversOfOneGroupShareOneSrq() {
        MemoryRecorder memory = new MemoryRecorder();
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        RdmaTransportConfig base = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER);
        RdmaTransportConfig grouped = base.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16)
                .withOption(RdmaOption.SHARED_RECEIVE_QUEUE_GROUP, "services").withMetrics(true, () -> memory);
        AtomicInteger index = new AtomicInteger(1);
        DisposableRdmaServer a = engine.bind(grouped, c -> handle(c, index.getAndIncrement(), 1, errors)).block(WAIT);
        DisposableRdmaServer b = engine.bind(grouped, c -> handle(c, index.getAndIncrement(), 2, errors)).block(WAIT);
        assertNotNull(a);
        assertNotNull(b);
        server = b;
        Flux.range(0, 6).flatMap(i -> exchange(engine, base.withPort((i % 2 == 0 ? a : b).port()), i, 20, errors))
                .then().block(WAIT);
        assertEquals(List.of(), List.copyOf(errors));
        assertEquals(16L * BUFFER, memory.max.get(), "one SRQ for both servers");
        a.disposeNow(Duration.ofSeconds(15));
        assertEquals(16L * BUFFER, memory.current.get(), "the group's SRQ stays while b is bound");
        exchange(engine, base.withPort(b.port()), 7, 20, errors).block(WAIT);
        assertEquals(List.of(), List.copyOf(errors));

        DisposableRdmaServer other = engine.bind(grouped.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 32),
                c -> c.onDispose()).block(WAIT);
        assertNotNull(other);
        try {
            assertThrows(RuntimeException.class, () -> engine.connect(base.withPort(other.port())).block(WAIT),
                    "a server that disagrees with its group's SRQ accepts nobody");
        } finally {
            other.disposeNow(Duration.ofSeconds(15));
        }
        b.disposeNow(Duration.ofSeconds(15));
        server = null;
        assertEquals(0, memory.current.get(), "the SRQ went with the group's last server");
    }

    /**
     * A peer that agreed on credits and sends beyond them takes receives promised to others: the server
     * closes that connection (a raw-verbs peer here, since the engine's own clients never do it).
     */
    @Test
    void aCreditPeerSendingWithoutCreditIsClosed() {
        reactor.core.publisher.Sinks.One<RdmaConnection> accepted = reactor.core.publisher.Sinks.one();
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER)
                .withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 32)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 4);
        // The handler wants everything and releases nothing: 4 credits (its share), then none.
        server = engine.bind(config, c -> {
            accepted.tryEmitValue(c);
            return c.receive().then();
        }).block(WAIT);
        assertNotNull(server);
        try (RawCreditPeer peer = new RawCreditPeer(stack, "raw credit peer")
                .connect(new InetSocketAddress("127.0.0.1", server.port()), WAIT)) {
            assertTrue(peer.awaitEstablished(WAIT), "accepted");
            RdmaConnection s = accepted.asMono().block(WAIT);
            assertNotNull(s);
            assertTrue(s.creditFlowControl(), "credits agreed");
            peer.sendWithoutCredits(12); // its share is 4
            s.onDispose().block(Duration.ofSeconds(10)); // throws on timeout: the server must close it
            assertTrue(s.isDisposed());
        }
    }

    /**
     * Consumers that hold their messages drain the SRQ below its limit: SRQ_LIMIT_REACHED fires, the engine
     * refills what is free and arms the limit again, so it fires again in the next round.
     */
    @Test
    void theLimitEventIsReArmedAfterEachRefill() {
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER);
        Queue<io.reactiverdma.reactive.RdmaMessage> held = new ConcurrentLinkedQueue<>();
        AtomicInteger arrived = new AtomicInteger();
        // 8 buffers, limit armed at 2: seven connections holding one message each leave one posted.
        server = engine.bind(config.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 8),
                c -> c.receive().take(1).doOnNext(m -> {
                    held.add(m);
                    arrived.incrementAndGet();
                }).then(Mono.never())).block(WAIT);
        assertNotNull(server);
        io.reactiverdma.reactive.impl.loopback.LoopbackSharedReceiveQueue srq = null;
        List<RdmaConnection> clients = new java.util.ArrayList<>();
        long rnrBefore = stack.rnrWaits();
        long eventsSeen = 0;
        try {
            for (int round = 1; round <= 2; round++) {
                for (int i = 0; i < 7; i++) {
                    RdmaConnection c = engine.connect(config.withPort(server.port())).block(WAIT);
                    assertNotNull(c);
                    clients.add(c);
                    c.send(message(i, round)).block(WAIT);
                }
                awaitTrue(() -> arrived.get() == clients.size() && held.size() == 7, "7 messages held");
                srq = (io.reactiverdma.reactive.impl.loopback.LoopbackSharedReceiveQueue) stack.resources()
                        .objects(io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind.SHARED_RECEIVE_QUEUE).get(0);
                io.reactiverdma.reactive.impl.loopback.LoopbackSharedReceiveQueue s = srq;
                // Each round must raise a new limit event (the limit was armed again after the last one). Not
                // an exact count: a client's hello (the credit-word handshake) takes an SRQ receive too, and
                // one taken while the SRQ is low raises an event of its own.
                long before = eventsSeen;
                awaitTrue(() -> s.limitEvents() > before, "a new limit event in round " + round);
                eventsSeen = s.limitEvents();
                io.reactiverdma.reactive.RdmaMessage m;
                while ((m = held.poll()) != null) {
                    m.release();
                }
                awaitTrue(() -> s.posted() == 8, "all 8 buffers posted again");
            }
            assertEquals(0, stack.rnrWaits() - rnrBefore);
        } finally {
            clients.forEach(c -> {
                c.dispose();
                c.onDispose().block(WAIT);
            });
        }
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within 10 s: " + what);
            Thread.onSpinWait();
        }
    }
}
