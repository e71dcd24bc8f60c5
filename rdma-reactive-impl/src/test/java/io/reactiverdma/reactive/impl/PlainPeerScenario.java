package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Sinks;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A plain peer (raw verbs, no private data: it cannot see credits) against the engine's server, on any stack
 * (the loopback device on the host, rxe in the VM). The plain peer's QP gets {@code rnr_retry_count} 0 (from
 * the server's RNR_RETRY_COUNT, as rdma_cm does it), so a single receiver-not-ready fails its send with
 * RNR_RETRY_EXC_ERR: the scenario sees every RNR.
 *
 * <ul>
 *   <li>{@link #backToBackMessagesAreAllDeliveredInOrder}: the server's handler asks for one message at a
 *       time, the peer sends right after the connection is established, back to back: the server keeps a
 *       window of receives posted ahead of demand (posted before it accepts), so no send meets RNR, and
 *       the messages wait in the engine, in order, until the handler asks for them;</li>
 *   <li>{@link #requestsBackToBack}: request/response, each request sent as soon as the previous response
 *       arrived (what a plain client of the key-value or echo server does): the time per request.</li>
 * </ul>
 */
final class PlainPeerScenario {
    private final RdmaEngine engine;
    private final RdmaStack stack;
    private final String host;
    private final Duration wait;
    private final List<PlainPeer> peers = new ArrayList<>();
    private DisposableRdmaServer server;
    private int depthOverride = 32;
    private int peerRnrRetry;
    /** The server's MIN_RNR_TIMER code, or -1 for the option's default. */
    private int minRnrTimer = -1;

    PlainPeerScenario(RdmaEngine engine, RdmaStack stack, String host, Duration wait) {
        this.engine = engine;
        this.stack = stack;
        this.host = host;
        this.wait = wait;
    }

    /**
     * The server's configuration. {@code RNR_RETRY_COUNT} is the plain peer's: rdma_cm applies the count each
     * side puts in its connection parameters to the other side's QP.
     */
    RdmaTransportConfig config() {
        RdmaTransportConfig c = RdmaTransportConfig.defaults().withHost(host).withPort(0)
                .withOption(RdmaOption.RNR_RETRY_COUNT, peerRnrRetry)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, depthOverride)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, 256);
        return minRnrTimer < 0 ? c : c.withOption(RdmaOption.MIN_RNR_TIMER, minRnrTimer);
    }

    /** {@code rnrRetry} must be the server's RNR_RETRY_COUNT (see {@link #config}): set before the bind. */
    PlainPeer connectPlain(int rnrRetry) {
        PlainPeer p = PlainPeer.connect(stack, host, server.port(), rnrRetry, 256, wait);
        peers.add(p);
        return p;
    }

    static byte[] message(int i) {
        return ("plain message " + i).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * {@code n} (at most the receive window, 32) messages sent back to back right after ESTABLISHED to a
     * handler that takes one at a time: all arrive, in order, and no send meets RNR.
     */
    void backToBackMessagesAreAllDeliveredInOrder(int n) {
        peerRnrRetry = 0;
        List<String> got = new CopyOnWriteArrayList<>();
        Sinks.Empty<Void> all = Sinks.empty();
        server = engine.bind(config(), c -> {
            c.receive().subscribe(new BaseSubscriber<RdmaMessage>() {
                @Override
                protected void hookOnSubscribe(Subscription s) {
                    s.request(1);
                }

                @Override
                protected void hookOnNext(RdmaMessage m) {
                    try {
                        got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
                    } finally {
                        m.release();
                    }
                    if (got.size() == n) {
                        all.tryEmitEmpty();
                    } else {
                        request(1);
                    }
                }
            });
            return c.onDispose();
        }).block(wait);
        assertNotNull(server);
        PlainPeer p = connectPlain(0);
        for (int i = 0; i < n; i++) {
            p.send(message(i));
        }
        p.awaitSent(wait); // an RNR fails here: RNR_RETRY_EXC_ERR
        all.asMono().block(wait);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            expected.add(new String(message(i), StandardCharsets.UTF_8));
        }
        assertEquals(expected, got);
    }

    /**
     * An echo server in the shape of the samples' servers (the handler's receive() feeds its send(), so its
     * demand follows what it has sent); a plain peer that sends each request as soon as the previous response
     * arrived, {@code n} times. Returns the mean time per request in microseconds. {@code rnrRetry} 0: an RNR
     * fails the peer (the test then sees it); 7: the peer waits out every RNR NAK (for a measurement).
     */
    double requestsBackToBack(int n, int rnrRetry) {
        peerRnrRetry = rnrRetry;
        server = engine.bind(config(), c -> c.send(c.receive().map(m -> {
            try {
                return ByteBuffer.wrap(m.toByteArray());
            } finally {
                m.release();
            }
        }))).block(wait);
        assertNotNull(server);
        PlainPeer p = connectPlain(rnrRetry);
        p.request(message(-1), wait); // the first (connection warm-up) is not timed
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            assertArrayEquals(message(i), p.request(message(i), wait), "response " + i);
        }
        double perRequestUs = (System.nanoTime() - start) / 1e3 / n;
        assertFalse(Double.isNaN(perRequestUs));
        return perRequestUs;
    }

    /**
     * With a receive window of {@code depth}, {@code n} messages sent back to back to a handler that takes and
     * releases one at a time, and holds the first one until {@code rnrSeen} says a send met RNR (at most
     * {@link #wait}): so a send beyond the window meets RNR whatever the threads' timing, and is retried after
     * this side's MIN_RNR_TIMER ({@code minRnrTimerCode}). Returns the time until all arrived, in ms. The peer
     * retries up to 6 times (the most RNR_RETRY_COUNT allows), so the server must post the held buffer again
     * within 6 timers: a timer of a few tens of milliseconds outlasts a loaded machine's scheduling.
     */
    long backToBackBeyondTheWindow(int n, int depth, int minRnrTimerCode, BooleanSupplier rnrSeen) {
        depthOverride = depth;
        peerRnrRetry = 6;
        minRnrTimer = minRnrTimerCode;
        List<String> got = new CopyOnWriteArrayList<>();
        Sinks.Empty<Void> all = Sinks.empty();
        server = engine.bind(config(), c -> c.receive().limitRate(1).doOnNext(m -> {
            if (got.isEmpty()) {
                // Spinning, not sleeping: the buffer goes back the moment the RNR is seen, well inside the
                // peer's retries.
                long deadline = System.nanoTime() + wait.toNanos();
                while (!rnrSeen.getAsBoolean() && System.nanoTime() - deadline < 0) {
                    Thread.onSpinWait();
                }
            }
            try {
                got.add(new String(m.toByteArray(), StandardCharsets.UTF_8));
            } finally {
                m.release();
            }
            if (got.size() == n) {
                all.tryEmitEmpty();
            }
        }).then(c.onDispose())).block(wait);
        assertNotNull(server);
        // The server sets MIN_RNR_TIMER right after rdma_accept returns: an RNR in the instant before (the QP
        // is up with rdma_cm's 655 ms) would wait that long. Its own ESTABLISHED comes after the setting.
        reactor.core.publisher.Mono<io.reactiverdma.reactive.ConnectionEvent> established = server.connectionEvents()
                .filter(e -> e.type() == io.reactiverdma.reactive.ConnectionEvent.Type.ESTABLISHED).next().cache();
        established.subscribe();
        PlainPeer p = connectPlain(6);
        assertNotNull(established.block(wait));
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            p.send(message(i));
        }
        p.awaitSent(wait);
        all.asMono().block(wait);
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertEquals(n, got.size());
        for (int i = 0; i < n; i++) {
            assertEquals(new String(message(i), StandardCharsets.UTF_8), got.get(i), "message " + i);
        }
        return ms;
    }

    void close() {
        for (PlainPeer p : peers) {
            p.close();
        }
        if (server != null) {
            server.disposeNow(wait);
        }
    }
}
