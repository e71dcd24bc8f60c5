package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.verbs.WcStatus;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Idle peer detection ({@link RdmaOption#IDLE_PROBE_INTERVAL}) on any stack: an idle connection to a live
 * peer is probed and not disturbed; one whose peer's host died is closed by the survivor, typed
 * ({@code RETRY_EXC_ERR} of the probe), within the interval (plus a quarter) plus the retry bound, and its
 * resources come back. The loopback device runs both ({@code IdlePeerProbeHostTest}); rxe in one VM runs the
 * live-peer part ({@code IdlePeerProbeRxeTest}: a host cannot die there), the two-host tests the rest.
 */
final class IdlePeerProbeScenario {
    private final RdmaEngine serverEngine;
    private final RdmaEngine clientEngine;
    private final String host;
    private final Duration wait;
    private final Duration interval;
    private final List<RdmaConnection> opened = new ArrayList<>();
    private final Sinks.Many<RdmaConnection> accepted = Sinks.many().replay().all();
    /** How each server connection's receive() ended (null: completed), by connection. */
    private final java.util.Map<RdmaConnection, CompletableFuture<Throwable>> ends =
            new java.util.concurrent.ConcurrentHashMap<>();
    private DisposableRdmaServer server;

    /** Two engines, so that each side has its own device resources (buffer pool) as on two hosts. */
    IdlePeerProbeScenario(RdmaEngine serverEngine, RdmaEngine clientEngine, String host, Duration wait,
            Duration interval) {
        this.serverEngine = serverEngine;
        this.clientEngine = clientEngine;
        this.host = host;
        this.wait = wait;
        this.interval = interval;
    }

    private boolean credits = true;

    /** Without credit flow control no credit update can still be outstanding when the peer dies. */
    IdlePeerProbeScenario withoutCredits() {
        credits = false;
        return this;
    }

    RdmaTransportConfig config(Duration probeInterval) {
        return RdmaTransportConfig.defaults().withHost(host).withPort(0)
                .withOption(RdmaOption.IDLE_PROBE_INTERVAL, probeInterval)
                .withOption(RdmaOption.CREDIT_FLOW_CONTROL, credits);
    }

    /** An echo server probing idle connections every {@code probeInterval}; its connections go to {@link #serverSide}. */
    void startServer(Duration probeInterval) {
        server = serverEngine.bind(config(probeInterval), c -> {
            CompletableFuture<Throwable> end = new CompletableFuture<>();
            ends.put(c, end);
            accepted.tryEmitNext(c);
            return c.receive().concatMap(m -> {
                ByteBuffer copy;
                try {
                    copy = ByteBuffer.wrap(m.toByteArray());
                } finally {
                    m.release();
                }
                return c.send(copy);
            }).doOnError(end::complete).doOnComplete(() -> end.complete(null));
        }).block(wait);
        assertNotNull(server);
    }

    DisposableRdmaServer server() {
        return server;
    }

    RdmaConnection connect(Duration probeInterval) {
        RdmaConnection c = clientEngine.connect(config(probeInterval).withPort(server.port())).block(wait);
        assertNotNull(c);
        opened.add(c);
        return c;
    }

    RdmaConnection serverSide(int index) {
        RdmaConnection s = accepted.asFlux().elementAt(index).block(wait);
        assertNotNull(s);
        return s;
    }

    /** One message there and back, checked. */
    void echo(RdmaConnection c, int value) {
        ByteBuffer m = ByteBuffer.allocate(8).putInt(0, value);
        StepVerifier.create(c.receive().take(1).map(r -> {
            try {
                return r.data().getInt(0);
            } finally {
                r.release();
            }
        })).then(() -> c.send(m).subscribe()).expectNext(value).expectComplete().verify(wait);
    }

    /**
     * Both sides probe every {@code interval}; while nothing else happens, {@code packetsSent} (the server's
     * QP, or the device's counter) grows by at least {@code probes}; the connection stays up, no event but
     * ESTABLISHED arrives, and messages still echo.
     */
    void aLiveIdlePeerIsProbedAndUndisturbed(LongSupplier packetsSent, int probes) {
        startServer(interval);
        RdmaConnection c = connect(interval);
        echo(c, 1);
        long before = packetsSent.getAsLong();
        awaitCondition(() -> packetsSent.getAsLong() - before >= probes,
                interval.multipliedBy(2L * probes).plus(wait), () -> "probes sent while idle: "
                        + (packetsSent.getAsLong() - before) + ", expected at least " + probes);
        assertFalse(c.isDisposed(), "the probed connection stays open");
        assertFalse(serverSide(0).isDisposed(), "the probing server's connection stays open");
        echo(c, 2);
        List<ConnectionEvent.Type> events = c.events().map(ConnectionEvent::type).take(Duration.ofMillis(200))
                .collectList().block(wait);
        assertNotNull(events);
        assertEquals(ConnectionEvent.Type.ESTABLISHED, events.get(events.size() - 1), "the probes raised no event: "
                + events);
    }

    /**
     * With the probe off on both sides, an idle connection sends nothing: {@code packetsSent} stays where it
     * was for four intervals (an absence, so it takes that long).
     */
    void withTheProbeOffAnIdleConnectionSendsNothing(LongSupplier packetsSent) throws InterruptedException {
        startServer(Duration.ZERO);
        RdmaConnection c = connect(Duration.ZERO);
        echo(c, 1);
        // Settled: no credit update still on its way (two reads an interval apart agree).
        long[] last = {packetsSent.getAsLong()};
        awaitCondition(() -> {
            try {
                TimeUnit.MILLISECONDS.sleep(interval.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            long now = packetsSent.getAsLong();
            boolean same = now == last[0];
            last[0] = now;
            return same;
        }, wait, () -> "the connection never settled");
        long before = packetsSent.getAsLong();
        Thread.sleep(interval.multipliedBy(4).toMillis()); // nothing to await: the point is that nothing happens
        assertEquals(before, packetsSent.getAsLong(), "packets sent on an idle connection with the probe off");
    }

    /**
     * The client's host dies ({@code killClientHost}) while the connection is idle: the server's probe gets
     * no acknowledgement, so the server closes the connection with the probe's {@code RETRY_EXC_ERR} within
     * 1.25 x interval + {@code retryBound} (plus {@code slack} for a loaded machine), releases it (its
     * connection count goes back to zero, its receive buffers back to the pool) and goes on serving.
     * Returns the measured time to detect.
     */
    Duration aDeadIdlePeerIsDetectedWithinTheBound(Runnable killClientHost, Duration retryBound, Duration slack) {
        startServer(interval);
        RdmaConnection c = connect(Duration.ZERO); // the client's own probe plays no part: its host dies
        echo(c, 1);
        RdmaConnection s = serverSide(0);
        BufferPool pool = (BufferPool) s.memory();
        assertEquals(1, server.connectionCount());

        long t0 = System.nanoTime();
        killClientHost.run();
        StepVerifier.create(s.onDispose()).expectComplete()
                .verify(interval.multipliedBy(5).dividedBy(4).plus(retryBound).plus(slack));
        Duration detected = Duration.ofNanos(System.nanoTime() - t0);
        Throwable cause = ends.get(s).join(); // receive() errors with the close cause
        assertInstanceOf(RdmaCompletionException.class, cause, "the close cause: " + cause);
        assertEquals(WcStatus.RETRY_EXC_ERR.value(), ((RdmaCompletionException) cause).status(), cause.toString());
        // The probe's, or (rarely) the credit update the server posted after the echo, if the kill came first:
        // posted work times out by itself.
        assertTrue(cause.getMessage().contains("idle probe")
                || ((RdmaCompletionException) cause).operation() == io.reactiverdma.reactive.OperationType.CREDIT_UPDATE,
                cause.getMessage());
        awaitCondition(() -> server.connectionCount() == 0, wait, () -> "server connections: " + server.connectionCount());
        awaitCondition(() -> pool.pooledBytesInUse() == 0, wait,
                () -> "pooled bytes still in use: " + pool.pooledBytesInUse());
        // The server goes on: a new client is served.
        RdmaConnection next = connect(interval);
        echo(next, 3);
        return detected;
    }

    /**
     * As {@link #aDeadIdlePeerIsDetectedWithinTheBound}, on a stack whose transport retries for longer than
     * the probe interval (or forever: rxe with the RETRY_COUNT 7 of a plain librdmacm peer): the probe is
     * neither acknowledged nor failed, and its own deadline (another interval) closes the connection, with
     * a {@code ConnectionClosedException} (so {@code receive()} completes), within 2.5 x the interval (plus
     * {@code slack}, which includes the close's drain timeout: the probe is still being retried).
     */
    Duration aDeadIdlePeerIsDetectedByTheProbesDeadline(Runnable killClientHost, Duration slack) {
        startServer(interval);
        RdmaConnection c = connect(Duration.ZERO);
        echo(c, 1);
        RdmaConnection s = serverSide(0);
        BufferPool pool = (BufferPool) s.memory();
        long t0 = System.nanoTime();
        killClientHost.run();
        StepVerifier.create(s.onDispose()).expectComplete().verify(interval.multipliedBy(5).dividedBy(2).plus(slack));
        Duration detected = Duration.ofNanos(System.nanoTime() - t0);
        assertEquals(null, ends.get(s).join(), "receive() completes: the close cause is no completion error");
        awaitCondition(() -> server.connectionCount() == 0, wait, () -> "server connections: " + server.connectionCount());
        awaitCondition(() -> pool.pooledBytesInUse() == 0, wait,
                () -> "pooled bytes still in use: " + pool.pooledBytesInUse());
        return detected;
    }

    private static void awaitCondition(BooleanSupplier condition, Duration within, java.util.function.Supplier<String> what) {
        long deadline = System.nanoTime() + within.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail(what.get() + " (after " + within + ")");
            }
            try {
                TimeUnit.MILLISECONDS.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    /** Closes what the scenario opened, then shuts both engines down (their devices' resources go with them). */
    void close() {
        opened.forEach(RdmaConnection::dispose);
        if (server != null) {
            server.disposeNow(wait);
        }
        clientEngine.shutdown().block(wait);
        serverEngine.shutdown().block(wait);
    }
}
