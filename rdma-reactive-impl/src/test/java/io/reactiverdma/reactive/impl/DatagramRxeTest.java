package io.reactiverdma.reactive.impl;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Datagram endpoints and multicast on Soft-RoCE: endpoint to endpoint, typed refusals, closing, and rdma-core's
 * {@code udaddy} and {@code mckey} (rdmacm-utils) as peers in both directions.
 */
@Tag(RxeTestSupport.TAG)
class DatagramRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The port udaddy always uses. */
    private static final int UDADDY_PORT = 7174;

    private final List<RdmaDatagramEndpoint> endpoints = new ArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();
    private final List<Process> processes = new ArrayList<>();

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        subscriptions.forEach(Disposable::dispose);
        for (RdmaDatagramEndpoint e : endpoints) {
            e.disposeNow(WAIT);
        }
        processes.forEach(Process::destroyForcibly);
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    private RdmaDatagramEndpoint bind(int port) {
        RdmaDatagramEndpoint e = RdmaDatagram.create().host(host()).port(port).bindNow(WAIT);
        endpoints.add(e);
        return e;
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(RdmaDatagramMessage d) {
        String s = new String(d.toByteArray(), StandardCharsets.UTF_8);
        d.release();
        return s;
    }

    @Test
    void endpointsResolveEachOtherSendWithImmediateAndReply() {
        RdmaDatagramEndpoint a = bind(0);
        RdmaDatagramEndpoint b = bind(0);
        BlockingQueue<RdmaDatagramMessage> atB = new LinkedBlockingQueue<>();
        subscriptions.add(b.receive().subscribe(atB::add));
        a.send(text("ping"), b.localAddress(), 42).block(WAIT);
        RdmaDatagramMessage got = next(atB);
        assertEquals("ping", new String(got.toByteArray(), StandardCharsets.UTF_8));
        assertTrue(got.hasImmediate());
        assertEquals(42, got.immediate());
        assertEquals(a.qpNumber(), got.senderQpNumber());
        assertEquals(a.localAddress().getAddress(), got.sender().getAddress());
        assertNull(got.group());
        // a does not listen for replies on rdma_cm: the answer goes back through the datagram's GRH.
        BlockingQueue<RdmaDatagramMessage> atA = new LinkedBlockingQueue<>();
        subscriptions.add(a.receive().subscribe(atA::add));
        b.reply(got, text("pong"), 7).block(WAIT);
        got.release();
        RdmaDatagramMessage answer = next(atA);
        assertEquals(7, answer.immediate());
        assertEquals("pong", text(answer));
        // The peer is resolved once: later sends reuse its address handle, in order on an idle link.
        Flux.range(0, 20).concatMap(i -> a.send(text("m" + i), b.localAddress())).blockLast(WAIT);
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            rest.add(text(next(atB)));
        }
        assertEquals("m0", rest.get(0));
        assertEquals("m19", rest.get(19));
        assertEquals(0, b.droppedCount());
    }

    private static RdmaDatagramMessage next(BlockingQueue<RdmaDatagramMessage> q) {
        try {
            RdmaDatagramMessage m = q.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            if (m == null) {
                fail("no datagram within " + WAIT);
            }
            return m;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void badSendsAreRefusedTypedBeforeAnythingIsPosted() {
        RdmaDatagramEndpoint a = bind(0);
        RdmaDatagramEndpoint b = bind(0);
        StepVerifier.create(a.send(ByteBuffer.allocate(a.maxMessageSize() + 1), b.localAddress()))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                        ((InvalidRequestException) e).reason()))
                .verify(WAIT);
        StepVerifier.create(a.send(text("x"), new InetSocketAddress("239.1.2.3", 0)))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.NOT_JOINED,
                        ((InvalidRequestException) e).reason()))
                .verify(WAIT);
        StepVerifier.create(a.join(new InetSocketAddress(host(), 0)))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        ((InvalidRequestException) e).reason()))
                .verify(WAIT);
        // Nobody listens on this port: the SIDR request is rejected or times out, typed.
        StepVerifier.create(a.send(text("x"), new InetSocketAddress(host(), 1)))
                .expectError(RdmaConnectException.class)
                .verify(WAIT);
        // A full-size datagram is fine.
        subscriptions.add(b.receive().subscribe(RdmaDatagramMessage::release));
        a.send(ByteBuffer.allocate(a.maxMessageSize()), b.localAddress()).block(WAIT);
        a.dispose();
        a.onDispose().block(WAIT);
        StepVerifier.create(a.send(text("late"), b.localAddress()))
                .expectError(ConnectionClosedException.class)
                .verify(WAIT);
    }

    @Test
    void multicastGroupsDeliverToMembersCountMetricsAndCloseLeavesThem() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        RdmaDatagramEndpoint publisher = RdmaDatagram.create().host(host()).port(0)
                .metrics(true, () -> MicrometerRdmaRecorder.of(registry)).bindNow(WAIT);
        endpoints.add(publisher);
        RdmaDatagramEndpoint subscriber = bind(0);
        InetSocketAddress g1 = new InetSocketAddress("239.7.7.1", 0);
        InetSocketAddress g2 = new InetSocketAddress("239.7.7.2", 0);
        Sinks.Many<String> one = Sinks.many().replay().all();
        Sinks.Many<String> two = Sinks.many().replay().all();
        subscriptions.add(subscriber.join(g1).map(DatagramRxeTest::text).subscribe(one::tryEmitNext, one::tryEmitError,
                one::tryEmitComplete));
        Disposable second = subscriber.join(g2).map(DatagramRxeTest::text).subscribe(two::tryEmitNext);
        subscriptions.add(publisher.join(g1).subscribe(RdmaDatagramMessage::release));
        subscriptions.add(publisher.join(g2).subscribe(RdmaDatagramMessage::release));
        subscriber.joined(g1).block(WAIT);
        subscriber.joined(g2).block(WAIT);
        publisher.joined(g1).block(WAIT);
        publisher.joined(g2).block(WAIT);
        StepVerifier.create(subscriber.join(g1)).expectError(InvalidRequestException.class).verify(WAIT);
        publisher.send(text("to one"), g1).block(WAIT);
        publisher.send(text("to two"), g2).block(WAIT);
        assertEquals("to one", one.asFlux().blockFirst(WAIT));
        assertEquals("to two", two.asFlux().blockFirst(WAIT));
        assertEquals(2.0, registry.get("rdma.datagrams").tag("outcome", "sent").counter().count());
        assertEquals(2.0, registry.get("rdma.multicast.groups").gauge().value());
        // Leaving g2 (cancel) stops its datagrams; g1 still flows.
        second.dispose();
        StepVerifier.create(subscriber.joined(g2)).expectError(InvalidRequestException.class).verify(WAIT);
        StepVerifier.create(subscriber.send(text("x"), g2))
                .expectErrorSatisfies(e -> assertEquals(InvalidRequestException.Reason.NOT_JOINED,
                        ((InvalidRequestException) e).reason()))
                .verify(WAIT);
        publisher.send(text("to two again"), g2).block(WAIT);
        publisher.send(text("to one again"), g1).block(WAIT);
        assertEquals(List.of("to one", "to one again"), one.asFlux().take(2).collectList().block(WAIT));
        assertEquals(1, two.asFlux().take(Duration.ofMillis(500)).count().block(WAIT));
        // Closing leaves every group, completes the group flux and releases everything.
        subscriber.dispose();
        subscriber.onDispose().block(WAIT);
        StepVerifier.create(one.asFlux().skip(2)).expectComplete().verify(WAIT);
        publisher.dispose();
        publisher.onDispose().block(WAIT);
        assertEquals(0.0, registry.get("rdma.multicast.groups").gauge().value());
    }

    // ---------------------------------------------------------------- rdma-core's tools as peers

    private Process start(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        processes.add(p);
        return p;
    }

    /** Collects the tool's output; completes {@code line} when a line containing {@code marker} appears. */
    private static CompletableFuture<String> output(Process p, String marker, CompletableFuture<Void> line) {
        return CompletableFuture.supplyAsync(() -> {
            StringBuilder all = new StringBuilder();
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String s;
                while ((s = r.readLine()) != null) {
                    all.append(s).append('\n');
                    if (marker != null && s.contains(marker)) {
                        line.complete(null);
                    }
                }
            } catch (IOException e) {
                all.append(e);
            }
            return all.toString();
        });
    }

    private static String finish(Process p, CompletableFuture<String> out, String what) throws Exception {
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(what + " did not finish within 60 s:\n" + out.getNow(""));
        }
        String s = out.get(10, TimeUnit.SECONDS);
        assertEquals(0, p.exitValue(), what + " failed:\n" + s);
        return s;
    }

    /** udaddy's server answers SIDR, takes 10 datagrams and replies 10 times to the QPN their immediate names. */
    @Test
    void udaddyServerIsResolvedSentToAndRepliesToUs() throws Exception {
        Process server = start("udaddy", "-b", host());
        CompletableFuture<String> out = output(server, null, new CompletableFuture<>());
        RdmaDatagramEndpoint e = bind(0);
        Sinks.Many<RdmaDatagramMessage> got = Sinks.many().unicast().onBackpressureBuffer();
        subscriptions.add(e.receive().subscribe(got::tryEmitNext));
        InetSocketAddress udaddy = new InetSocketAddress(host(), UDADDY_PORT);
        byte[] payload = new byte[100];
        for (int attempt = 0; ; attempt++) { // until udaddy listens
            try {
                e.send(ByteBuffer.wrap(payload), udaddy, e.qpNumber()).block(WAIT);
                break;
            } catch (RdmaConnectException notYet) {
                if (attempt > 40 || !server.isAlive()) {
                    fail("udaddy never answered: " + notYet + "\n" + out.getNow(""));
                }
                Thread.sleep(250);
            }
        }
        Flux.range(1, 9).concatMap(i -> e.send(ByteBuffer.wrap(payload), udaddy, e.qpNumber())).blockLast(WAIT);
        List<RdmaDatagramMessage> replies = got.asFlux().take(10).collectList().block(WAIT);
        for (RdmaDatagramMessage r : replies) {
            assertEquals(100, r.length());
            assertTrue(r.hasImmediate(), "udaddy sends with immediate data (its QPN)");
            assertEquals(r.immediate(), r.senderQpNumber());
            r.release();
        }
        finish(server, out, "udaddy server");
    }

    /** udaddy's client resolves us through SIDR, sends 10 datagrams and waits for 10 replies. */
    @Test
    void udaddyClientResolvesUsAndGetsReplies() throws Exception {
        RdmaDatagramEndpoint e = bind(UDADDY_PORT);
        subscriptions.add(e.receive().flatMap(d -> {
            byte[] echo = d.toByteArray();
            return e.reply(d, ByteBuffer.wrap(echo), e.qpNumber()).doFinally(s -> d.release());
        }).subscribe());
        Process client = start("udaddy", "-s", host(), "-b", host());
        finish(client, output(client, null, new CompletableFuture<>()), "udaddy client");
        assertEquals(0, e.droppedCount());
    }

    /** mckey as receiver: joins, waits 3 s, expects 10 datagrams of 100 bytes; we join and send them. */
    @Test
    void mckeyReceivesWhatWeSendToTheGroup() throws Exception {
        InetSocketAddress group = new InetSocketAddress("239.8.8.8", 0);
        // Line-buffered: mckey's "joined" line must reach us before it exits.
        Process receiver = start("stdbuf", "-oL", "mckey", "-m", "239.8.8.8", "-b", host());
        CompletableFuture<Void> joined = new CompletableFuture<>();
        CompletableFuture<String> out = output(receiver, "joined", joined);
        RdmaDatagramEndpoint e = bind(0);
        subscriptions.add(e.join(group).subscribe(RdmaDatagramMessage::release));
        e.joined(group).block(WAIT);
        joined.get(60, TimeUnit.SECONDS);
        Thread.sleep(1000); // mckey posts its receives before joining; give its join the moment to attach
        Flux.range(0, 10).concatMap(i -> e.send(ByteBuffer.allocate(100), group, e.qpNumber())).blockLast(WAIT);
        String s = finish(receiver, out, "mckey receiver");
        assertTrue(s.contains("data transfers complete"), s);
    }

    /** mckey as sender (-s): joins, waits 3 s, sends 10 datagrams of 100 bytes; we receive them on the group. */
    @Test
    void weReceiveWhatMckeySendsToTheGroup() throws Exception {
        InetSocketAddress group = new InetSocketAddress("239.8.8.9", 0);
        RdmaDatagramEndpoint e = bind(0);
        Sinks.Many<RdmaDatagramMessage> got = Sinks.many().unicast().onBackpressureBuffer();
        subscriptions.add(e.join(group).subscribe(got::tryEmitNext));
        e.joined(group).block(WAIT);
        Process sender = start("mckey", "-m", "239.8.8.9", "-b", host(), "-s");
        CompletableFuture<String> out = output(sender, null, new CompletableFuture<>());
        List<RdmaDatagramMessage> all = got.asFlux().take(10).collectList().block(WAIT);
        for (RdmaDatagramMessage d : all) {
            assertEquals(100, d.length());
            assertEquals(group.getAddress(), d.group().getAddress());
            assertEquals(d.immediate(), d.senderQpNumber(), "mckey sends its QPN as immediate data");
            d.release();
        }
        finish(sender, out, "mckey sender");
    }
}
