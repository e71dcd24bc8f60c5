package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PeerProtocolException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Attacks on a server's shared receive queue by raw-verbs peers ({@link RawCreditPeer}) that agreed on credit
 * flow control, on any stack (the loopback device on the host, rxe in the VM): peers that never send their
 * hello, and a peer that sends without credits. Whatever they do, they may only stall or lose their own
 * connection: an honest client's echo keeps working, and new connections are still accepted.
 *
 * <p>The server: an SRQ of 8 buffers, at most 4 per connection ({@code RECEIVE_QUEUE_DEPTH}), so a handful of
 * peers is enough to take every buffer if the engine lets them.
 */
final class SharedReceiveAttackScenario implements AutoCloseable {
    static final int SRQ_DEPTH = 8;
    static final int SHARE = 4;
    /** How long {@link #anHonestClientRidesOutAFloodWhileTheServerIsStalled} holds the server's poller up. */
    static final Duration STALL = Duration.ofMillis(60);

    private final RdmaEngine engine;
    private final RdmaStack rawStack;
    private final String host;
    private final Duration wait;
    private final Duration acceptTimeout;
    private final List<RdmaConnection> opened = new ArrayList<>();
    private final List<RawCreditPeer> peers = new ArrayList<>();
    private DisposableRdmaServer server;

    /**
     * @param rawStack      the stack the raw peers use (the engine's own on the loopback device; a second
     *                      rdma-core stack on rxe)
     * @param acceptTimeout the server's ACCEPT_TIMEOUT, which also bounds a hello's arrival
     */
    SharedReceiveAttackScenario(RdmaEngine engine, RdmaStack rawStack, String host, Duration wait,
            Duration acceptTimeout) {
        this.engine = engine;
        this.rawStack = rawStack;
        this.host = host;
        this.wait = wait;
        this.acceptTimeout = acceptTimeout;
    }

    private RdmaTransportConfig base() {
        return RdmaTransportConfig.defaults().withHost(host).withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, RawCreditPeer.BUFFER)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, SHARE)
                .withOption(RdmaOption.CONNECT_TIMEOUT, wait);
    }

    void startServer(Function<RdmaConnection, Publisher<Void>> handler) {
        startServer(handler, RdmaOption.RNR_RETRY_COUNT.defaultValue());
    }

    /** @param rnrRetry the server's RNR_RETRY_COUNT, which rdma_cm applies to its peers' sends */
    void startServer(Function<RdmaConnection, Publisher<Void>> handler, int rnrRetry) {
        server = engine.bind(base().withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, SRQ_DEPTH)
                .withOption(RdmaOption.ACCEPT_TIMEOUT, acceptTimeout)
                .withOption(RdmaOption.RNR_RETRY_COUNT, rnrRetry), handler).block(wait);
        assertNotNull(server);
    }

    static Mono<Void> echo(RdmaConnection c) {
        return c.send(c.receive().map(m -> {
            try {
                return ByteBuffer.wrap(m.toByteArray());
            } finally {
                m.release();
            }
        }));
    }

    InetSocketAddress serverAddress() {
        return new InetSocketAddress(host, server.port());
    }

    RdmaConnection connect(RdmaTransportConfig config) {
        RdmaConnection c = engine.connect(config.withPort(server.port())).block(wait);
        assertNotNull(c);
        opened.add(c);
        return c;
    }

    RawCreditPeer rawPeer(String name) {
        RawCreditPeer p = new RawCreditPeer(rawStack, name);
        peers.add(p);
        return p.connect(serverAddress(), wait);
    }

    /** Sends {@code count} numbered messages one after the other; each must come back unchanged, in order. */
    Mono<Void> exchange(RdmaConnection c, String name, int count) {
        Flux<String> echoes = c.receive().take(count).map(SharedReceiveAttackScenario::text);
        Mono<Void> sends = Flux.range(0, count).concatMap(i -> c.send(ByteBuffer.wrap(message(name, i)))).then();
        return Mono.when(sends, echoes.index().doOnNext(t -> assertEquals(new String(message(name,
                (int) (long) t.getT1()), StandardCharsets.UTF_8), t.getT2(), name + ": message " + t.getT1()))
                .count().doOnNext(n -> assertEquals(count, (long) n, name + ": echoes")));
    }

    private static byte[] message(String name, int i) {
        return (name + " message " + i).getBytes(StandardCharsets.UTF_8);
    }

    private static String text(RdmaMessage m) {
        try {
            return new String(m.toByteArray(), StandardCharsets.UTF_8);
        } finally {
            m.release();
        }
    }

    /**
     * As many silent peers as the SRQ has buffers connect with a credit offer and never send their hello.
     * Before: each kept an SRQ receive for its hello for as long as it stayed connected, and the credits of
     * every connection were computed net of them (engine-defects.md, finding 1). Now: an already connected
     * client keeps getting credits throughout (it exchanges 5 times its share), every silent peer's
     * connection is ended by the server (rejected after ACCEPT_TIMEOUT while it waits for a hello receive, or
     * disconnected when its hello does not arrive within ACCEPT_TIMEOUT of ESTABLISHED), and then a new client
     * is accepted and served.
     */
    void silentPeersStallOnlyTheirOwnConnections() {
        Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        // An echo by single sends (a streaming send(Publisher) fails first on a close, and cancels receive()).
        startServer(c -> c.receive().doOnError(errors::add).concatMap(m -> {
            ByteBuffer copy;
            try {
                copy = ByteBuffer.wrap(m.toByteArray());
            } finally {
                m.release();
            }
            return c.send(copy);
        }).then());
        RdmaConnection before = connect(base());
        exchange(before, "before", SHARE).block(wait);
        for (int i = 0; i < SRQ_DEPTH; i++) {
            rawPeer("silent peer " + i);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        while (server.connectionCount() < 1 + SRQ_DEPTH) { // every request got as far as the server's handler
            assertTrue(System.nanoTime() - deadline < 0, "the server saw " + server.connectionCount()
                    + " connections, not 1 + " + SRQ_DEPTH + ", within " + wait);
            Thread.onSpinWait();
        }
        exchange(before, "during the attack", 5 * SHARE).block(wait);
        int accepted = 0;
        for (RawCreditPeer p : peers) {
            List<CmEventType> seen = p.awaitEnd(wait);
            if (seen.contains(CmEventType.ESTABLISHED)) {
                accepted++;
            }
        }
        assertTrue(accepted > 0, "no silent peer was accepted, so none tested the hello deadline");
        int silentAccepted = accepted;
        deadline = System.nanoTime() + wait.toNanos();
        while (errors.size() < silentAccepted) { // their handlers learn why
            assertTrue(System.nanoTime() - deadline < 0, "handler errors " + errors);
            Thread.onSpinWait();
        }
        for (Throwable e : errors) {
            assertEquals(PeerProtocolException.Violation.HELLO_TIMEOUT, ((PeerProtocolException) e).violation());
        }
        RdmaConnection after = connect(base());
        exchange(after, "after", 2 * SHARE).block(wait);
    }

    /**
     * A peer that agreed on credits sends 12 messages at once, without waiting for credits, into an SRQ of 8, where two honest
     * clients hold credits (and would lose their connection at the first RNR: the server's RNR_RETRY_COUNT 0,
     * which rdma_cm applies to its peers' sends). Before:
     * its messages were delivered to the application (which here keeps them, so their buffers never came
     * back) and took receives promised to the honest clients, which then met RNR (finding 4). Now: none is
     * delivered, each buffer is posted again at once, the offender's QP is moved to ERR at once and its
     * connection closed, and the honest clients go on without a single RNR.
     */
    void uncreditedSendsAreDroppedAndOthersKeepTheirReceives() {
        Queue<RdmaMessage> keptFromOffender = new ConcurrentLinkedQueue<>();
        AtomicInteger index = new AtomicInteger();
        Queue<Throwable> offenderError = new ConcurrentLinkedQueue<>();
        startServer(c -> index.getAndIncrement() == 0
                ? c.receive().doOnNext(keptFromOffender::add).doOnError(offenderError::add).then() // keeps them
                : echo(c), 0);
        RawCreditPeer offender = rawPeer("offender");
        assertTrue(offender.awaitEstablished(wait), "the offender was not accepted");
        offender.sendHello(); // as the engine's clients do: its connection then has credits agreed and open
        RdmaConnection a = connect(base());
        RdmaConnection b = connect(base());
        Mono.when(exchange(a, "a", SHARE), exchange(b, "b", SHARE)).block(wait); // both hold credits now
        offender.sendWithoutCredits(12);
        offender.awaitEnd(wait);
        // Once its server connection is gone, every message it sent was handled (its QP was destroyed after
        // the completions it had left in the CQ): the receives its uncredited messages took are posted again.
        long deadline = System.nanoTime() + wait.toNanos();
        while (server.connectionCount() > 2) {
            assertTrue(System.nanoTime() - deadline < 0, "the offender's server connection did not close within " + wait);
            Thread.onSpinWait();
        }
        Mono.when(exchange(a, "a after", 10 * SHARE), exchange(b, "b after", 10 * SHARE)).block(wait);
        assertEquals(List.of(PeerProtocolException.Violation.SENT_WITHOUT_CREDIT), offenderError.stream()
                .map(e -> ((PeerProtocolException) e).violation()).toList(), "how the handler learnt of it");
        // Credits the server gave it after its hello (its handler wants messages) are credits: at most its
        // share of the flood can arrive with one.
        assertTrue(keptFromOffender.size() <= SHARE, keptFromOffender.size() + " of the offender's messages reached "
                + "the application, more than the " + SHARE + " credits it can have had");
    }

    /**
     * The flood of {@link #uncreditedSendsAreDroppedAndOthersKeepTheirReceives} while the server's SRQ poller is
     * held up for {@link #STALL} (its thread busy, as a long GC pause or a server process the OS does not
     * schedule would hold it): the offender's messages take every posted receive, so an honest client's
     * credited message meets RNR until the poller posts them again, and its device retries it as the server's
     * queue pair says (RNR_RETRY_COUNT retries, MIN_RNR_TIMER apart). The honest client must ride that out.
     * Before: an SRQ server's connections had the default 0.64 ms timer, so three retries took about 2 ms (on
     * rxe, rounded up to kernel ticks, about 12 ms), and the honest client lost its connection with
     * RNR_RETRY_EXC_ERR: seen in CI, against the echo server under attack on rxe.
     */
    void anHonestClientRidesOutAFloodWhileTheServerIsStalled() {
        CountDownLatch stalled = new CountDownLatch(1);
        AtomicInteger index = new AtomicInteger();
        startServer(c -> index.getAndIncrement() == 0
                ? c.receive().doOnNext(RdmaMessage::release).then() // the offender's
                : c.receive().concatMap(m -> {
                    String t = text(m);
                    if (t.equals("stall")) { // on the SRQ's poller thread: every connection of the SRQ waits
                        stalled.countDown();
                        LockSupport.parkNanos(STALL.toNanos());
                        return Mono.empty();
                    }
                    return c.send(ByteBuffer.wrap(t.getBytes(StandardCharsets.UTF_8)));
                }).then());
        RawCreditPeer offender = rawPeer("offender");
        assertTrue(offender.awaitEstablished(wait), "the offender was not accepted");
        offender.sendHello();
        RdmaConnection honest = connect(base());
        RdmaConnection staller = connect(base());
        exchange(honest, "honest", SHARE).block(wait);
        staller.send(ByteBuffer.wrap("stall".getBytes(StandardCharsets.UTF_8))).block(wait);
        try {
            assertTrue(stalled.await(wait.toMillis(), TimeUnit.MILLISECONDS), "the server's handler never stalled");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        offender.sendWithoutCredits(12);
        exchange(honest, "honest during the stall", SHARE).block(wait);
        exchange(staller, "staller after the stall", SHARE).block(wait);
    }

    /**
     * Both attacks at once against a server in another process ({@code echo}, an echo server with an SRQ of
     * {@link #SRQ_DEPTH}): {@link #SRQ_DEPTH} silent peers and an offender that floods 12 messages after its
     * hello, while an honest client's echo keeps working; the server ends every silent peer's connection, and
     * a client that connects afterwards is served.
     */
    void attackAnEchoServer(InetSocketAddress echo) {
        RdmaTransportConfig honest = base().withHost(echo.getHostString());
        RdmaConnection before = engine.connect(honest.withPort(echo.getPort())).block(wait);
        assertNotNull(before);
        opened.add(before);
        exchange(before, "before", SHARE).block(wait);
        // The offender first: behind the silent peers it would wait for a hello receive as long as they hold
        // them, and could be rejected (silent peers may delay new connections; they may not starve others).
        RawCreditPeer offender = new RawCreditPeer(rawStack, "offender");
        peers.add(offender);
        offender.connect(echo, wait);
        assertTrue(offender.awaitEstablished(wait), "the offender was not accepted");
        offender.sendHello();
        List<RawCreditPeer> silent = new ArrayList<>();
        for (int i = 0; i < SRQ_DEPTH; i++) {
            RawCreditPeer p = new RawCreditPeer(rawStack, "silent peer " + i);
            peers.add(p);
            silent.add(p.connect(echo, wait));
        }
        exchange(before, "during the silent attack", 5 * SHARE).block(wait);
        // A server that keeps up may cover each of these with a credit it gives meanwhile (its handler releases
        // at once): then none is a violation, and the offender keeps its connection. Either way the honest
        // client must go on (an overrun is closed as in uncreditedSendsAreDroppedAndOthersKeepTheirReceives).
        offender.sendWithoutCredits(12);
        exchange(before, "after the flood", 5 * SHARE).block(wait);
        for (RawCreditPeer p : silent) {
            p.awaitEnd(wait);
        }
        RdmaConnection after = engine.connect(honest.withPort(echo.getPort())).block(wait);
        assertNotNull(after);
        opened.add(after);
        exchange(after, "after", 2 * SHARE).block(wait);
    }

    @Override
    public void close() {
        for (RdmaConnection c : opened) {
            c.dispose();
            c.onDispose().block(wait);
        }
        for (RawCreditPeer p : peers) {
            p.close();
        }
        if (server != null) {
            server.disposeNow(wait);
        }
        // An engine left running keeps its devices' resources for the rest of the JVM's tests.
        engine.shutdown().block(wait);
    }
}
