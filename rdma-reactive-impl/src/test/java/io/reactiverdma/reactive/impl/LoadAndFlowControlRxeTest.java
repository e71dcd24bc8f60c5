package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Load and flow control on a real device (rxe in the VM): many connections at once, a long stream into a
 * slow consumer without a single RNR, the same stream without credits failing on the first RNR (so the
 * RNR checks can fail), and a full send queue that makes posts wait instead of failing.
 */
@Tag(RxeTestSupport.TAG)
class LoadAndFlowControlRxeTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    private final RxeResources resources = new RxeResources();
    private final List<DisposableRdmaServer> servers = resources.servers;
    private final List<RdmaConnection> clients = resources.clients;
    private Scheduler slow;

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        resources.close();
        if (slow != null) {
            slow.dispose();
        }
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    /** Echo: each message comes back as is; the echo stream is backpressured by the sender's credits. */
    private static Mono<Void> echo(RdmaConnection c) {
        return c.send(c.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        }));
    }

    private static ByteBuffer message(int connection, int seq, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(0, connection).putInt(4, seq);
        for (int i = 8; i < size; i++) {
            b.put(i, (byte) (connection * 31 + seq * 7 + i));
        }
        return b;
    }

    private static void check(RdmaMessage m, int connection, int seq, int size) {
        try {
            assertEquals(size, m.length(), "length of message " + seq + " on connection " + connection);
            ByteBuffer expected = message(connection, seq, size);
            ByteBuffer got = m.data();
            for (int i = 0; i < size; i++) {
                if (expected.get(i) != got.get(i)) {
                    fail("connection " + connection + ", message " + seq + ": byte " + i + " is " + got.get(i)
                            + ", expected " + expected.get(i));
                }
            }
        } finally {
            m.release();
        }
    }

    @Test
    void sixtyFourConcurrentConnectionsToOneServerExchangeCheckedData() {
        int connections = 64;
        int perConnection = 10;
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .handle(LoadAndFlowControlRxeTest::echo).bindNow(WAIT);
        servers.add(server);
        RdmaClient client = RdmaClient.create().host(host()).port(server.port())
                // 64 connections in one small VM: modest queues keep the pinned memory small.
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16).option(RdmaOption.SEND_QUEUE_DEPTH, 16)
                // All 64 connect at once and each one's set-up is serial on the rdma_cm threads: under emulation
                // the last one once took more than the default 10 s (CI run, 2026-11-23). This test is about
                // concurrent exchanges, not connect latency.
                .option(RdmaOption.CONNECT_TIMEOUT, java.time.Duration.ofSeconds(60));
        ConcurrentLinkedQueue<RdmaConnection> opened = new ConcurrentLinkedQueue<>();
        AtomicLong verified = new AtomicLong();
        Flux<Integer> all = Flux.range(0, connections).flatMap(i -> client.connect().flatMap(c -> {
            opened.add(c);
            int size = 16 + i * 61; // 16 .. 3859 bytes: every connection its own size
            Mono<Void> received = c.receive().take(perConnection).index()
                    .doOnNext(t -> {
                        check(t.getT2(), i, (int) (long) t.getT1(), size);
                        verified.incrementAndGet();
                    })
                    .then();
            Mono<Void> sent = c.send(Flux.range(0, perConnection).map(seq -> message(i, seq, size)));
            return Mono.when(received, sent).thenReturn(i);
        }), connections);
        try {
            StepVerifier.create(all.collectList())
                    .assertNext(done -> assertEquals(connections, done.size()))
                    .expectComplete()
                    .verify(Duration.ofMinutes(5));
            assertEquals((long) connections * perConnection, verified.get());
            assertEquals(connections, server.connectionCount(), "all connections still open on the server");
        } finally {
            clients.addAll(opened);
        }
    }

    /** rxe's per-port counter of RNR NAKs received by requesters, or -1 when this device has none. */
    private static long rnrNaksReceived() {
        return RxeTestSupport.hwCounters().getOrDefault("rcvd_rnr_err", -1L);
    }

    private RdmaConnection[] pair(boolean credits, int rnrRetry) {
        return pair(credits, rnrRetry, RdmaOption.RECEIVE_QUEUE_DEPTH.defaultValue());
    }

    private RdmaConnection[] pair(boolean credits, int rnrRetry, int serverReceiveDepth) {
        Sinks.One<RdmaConnection> serverSide = Sinks.one();
        // rdma_cm applies each side's RNR retry count to the PEER's QP (the server's accept sets how often
        // the client's sends are retried): both sides get it, so the client's sends see exactly rnrRetry.
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .option(RdmaOption.CREDIT_FLOW_CONTROL, credits)
                .option(RdmaOption.RNR_RETRY_COUNT, rnrRetry)
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, serverReceiveDepth)
                .handle(c -> {
                    serverSide.tryEmitValue(c);
                    return c.onDispose();
                }).bindNow(WAIT);
        servers.add(server);
        RdmaConnection client = RdmaClient.create().host(host()).port(server.port())
                .option(RdmaOption.CREDIT_FLOW_CONTROL, credits)
                .option(RdmaOption.RNR_RETRY_COUNT, rnrRetry)
                .connectNow(WAIT);
        clients.add(client);
        RdmaConnection s = serverSide.asMono().block(WAIT);
        assertNotNull(s);
        assertEquals(credits, client.creditFlowControl());
        return new RdmaConnection[] {client, s};
    }

    /**
     * 100,000 messages through send(Publisher) into a consumer that is slower than the sender and pauses
     * now and then. The RNR retry count is 0 on both sides: a single RNR NAK would fail the stream with
     * RNR_RETRY_EXC_ERR; the device's RNR NAK counter is checked as well.
     */
    @Test
    void hundredThousandMessagesIntoASlowConsumerWithoutRnrLossOrReordering() {
        int count = 100_000;
        int size = 32;
        RdmaConnection[] p = pair(true, 0);
        RdmaConnection client = p[0];
        RdmaConnection server = p[1];
        assertTrue(client.creditFlowControl());
        long rnrBefore = rnrNaksReceived();
        slow = Schedulers.newSingle("slow-consumer");
        AtomicLong next = new AtomicLong();
        Mono<Long> consumed = server.receive()
                .publishOn(slow, 16)
                .doOnNext(m -> {
                    long expected = next.getAndIncrement();
                    try {
                        ByteBuffer d = m.data();
                        assertEquals(size, m.length());
                        long seq = d.getLong(0);
                        if (seq != expected) {
                            fail("message " + expected + " expected, got " + seq + " (lost or reordered)");
                        }
                        assertEquals(~seq, d.getLong(8), "payload of message " + seq);
                    } finally {
                        m.release();
                    }
                    if (expected % 5_000 == 4_999) {
                        sleep(100); // the consumer stalls: the sender must stop on credits, not overrun
                    }
                })
                .take(count)
                .count();
        Mono<Void> sent = client.send(Flux.range(0, count).map(i -> {
            ByteBuffer b = ByteBuffer.allocate(size);
            b.putLong(0, i).putLong(8, ~(long) i);
            return b;
        }));
        StepVerifier.create(Mono.zip(consumed, sent.thenReturn(true)))
                .assertNext(t -> assertEquals(count, t.getT1()))
                .expectComplete()
                .verify(Duration.ofMinutes(10));
        assertEquals(count, next.get());
        long rnrAfter = rnrNaksReceived();
        System.out.println("100k stream: RNR NAKs received by the device before/after: " + rnrBefore + "/" + rnrAfter);
        if (rnrBefore >= 0) {
            assertEquals(rnrBefore, rnrAfter, "RNR NAKs during the stream");
        }
    }

    /** The control for the test above: without credits the same pattern hits RNR at once. */
    @Test
    void withoutCreditsASlowConsumerCausesRnrAndTheSendFailsTyped() {
        // Without credits the server keeps every free buffer posted ahead of demand: with one buffer, the
        // second send finds none while the first waits for (or is held by) the consumer.
        RdmaConnection[] p = pair(false, 0, 1);
        RdmaConnection client = p[0];
        RdmaConnection server = p[1];
        long rnrBefore = rnrNaksReceived();
        Sinks.One<Throwable> failure = Sinks.one();
        StepVerifier.create(server.receive(), 1)
                .then(() -> client.send(Flux.range(0, 5).map(i -> ByteBuffer.allocate(8).putLong(0, i)))
                        .subscribe(null, failure::tryEmitValue))
                .assertNext(RdmaMessage::release)
                .thenCancel()
                .verify(WAIT);
        StepVerifier.create(failure.asMono())
                .assertNext(e -> {
                    assertTrue(e instanceof RdmaCompletionException, "a completion error, got " + e);
                    assertEquals("RNR_RETRY_EXC_ERR", ((RdmaCompletionException) e).statusName(), e.toString());
                })
                .expectComplete()
                .verify(WAIT);
        client.onDispose().block(WAIT);
        long rnrAfter = rnrNaksReceived();
        if (rnrBefore >= 0) {
            assertTrue(rnrAfter > rnrBefore, "the device counted RNR NAKs: " + rnrBefore + " -> " + rnrAfter);
        }
    }

    /** A send queue of 2 and 200 sends at once: they wait for slots in order, none fails. */
    @Test
    void aFullSendQueueMakesSendsWaitInOrderNotFail() {
        Sinks.One<RdmaConnection> serverSide = Sinks.one();
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .handle(c -> {
                    serverSide.tryEmitValue(c);
                    return c.onDispose();
                }).bindNow(WAIT);
        servers.add(server);
        RdmaConnection client = RdmaClient.create().host(host()).port(server.port())
                .option(RdmaOption.SEND_QUEUE_DEPTH, 2).connectNow(WAIT);
        clients.add(client);
        RdmaConnection s = serverSide.asMono().block(WAIT);
        int n = 200;
        AtomicLong next = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        StepVerifier.create(s.receive().take(n).doOnNext(m -> {
                    long expected = next.getAndIncrement();
                    assertEquals(expected, m.data().getInt(0), "order");
                    m.release();
                }).then())
                .then(() -> {
                    for (int i = 0; i < n; i++) {
                        client.send(ByteBuffer.allocate(4).putInt(0, i)).subscribe(null, errors::add);
                    }
                })
                .expectComplete()
                .verify(Duration.ofMinutes(3));
        assertEquals(n, next.get());
        assertTrue(errors.isEmpty(), "no send failed: " + errors);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
