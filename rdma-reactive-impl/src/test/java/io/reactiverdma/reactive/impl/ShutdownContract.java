package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How servers and engines end, on every stack: a graceful server shutdown refuses new clients at once and
 * ends when the handlers' work is done or at its bound, whichever is first (also when its subscriber
 * cancels); an engine's shutdown closes every connection and server and leaves an engine that works again.
 * {@link ShutdownLoopbackTest} runs it on the loopback device (and checks that every device resource was
 * released), {@link ShutdownRxeTest} on rxe in the VM.
 *
 * <p>Each test has its own two engines, a server's and a client's, shut down after it.
 */
abstract class ShutdownContract {
    private RdmaEngine serverEngine;
    private RdmaEngine clientEngine;
    private DisposableRdmaServer server;
    private RdmaConnection client;

    /** The stack under test (new engines on it, its device address, step time, resource check and close). */
    protected abstract StackFixture stack();

    private RdmaEngine newEngine() {
        return stack().newEngine();
    }

    private String host() {
        return stack().host();
    }

    private Duration waitTime() {
        return stack().waitTime();
    }

    /** Both engines were shut down: the stack holds nothing of them, where it can count. */
    private void assertEverythingReleased() {
        stack().assertEverythingReleased();
    }

    private RdmaEngine serverEngine() {
        if (serverEngine == null) {
            serverEngine = newEngine();
        }
        return serverEngine;
    }

    private RdmaEngine clientEngine() {
        if (clientEngine == null) {
            clientEngine = newEngine();
        }
        return clientEngine;
    }

    @AfterEach
    void shutDownEngines() {
        try {
            if (client != null) {
                client.dispose();
            }
            if (clientEngine != null) {
                clientEngine.shutdown().block(waitTime());
            }
            if (serverEngine != null) {
                serverEngine.shutdown().block(waitTime());
            }
        } finally {
            stack().close();
        }
    }

    private RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost(host()).withPort(0);
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private DisposableRdmaServer echoServer() {
        DisposableRdmaServer s = serverEngine().bind(config(), c -> c.send(c.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        }))).block(waitTime());
        assertNotNull(s);
        return s;
    }

    private RdmaConnection connectAndEcho(DisposableRdmaServer to) {
        RdmaConnection c = clientEngine().connect(config().withPort(to.port())).block(waitTime());
        assertNotNull(c);
        StepVerifier.create(c.send(ByteBuffer.wrap(new byte[] {1, 2, 3})).then(c.receive().next()
                        .doOnNext(RdmaMessage::release).map(RdmaMessage::length)))
                .expectNext(3).expectComplete().verify(waitTime());
        return c;
    }

    @Test
    void gracefulShutdownRefusesNewClientsAtOnceAndEndsWhenTheHandlersWorkIsDone() {
        // The handler answers one request, then its publisher completes: work that finishes on its own.
        server = serverEngine().bind(config(), conn -> conn.receive().take(1).concatMap(m -> {
            m.release();
            return Mono.delay(Duration.ofMillis(300)).then(conn.send(text("done")));
        }).then()).block(waitTime());
        assertNotNull(server);
        client = clientEngine().connect(config().withPort(server.port())).block(waitTime());
        assertNotNull(client);
        Mono<RdmaMessage> answer = client.receive().next().cache();
        answer.subscribe();
        client.send(text("work")).block(waitTime());

        Duration bound = waitTime();
        long start = System.nanoTime();
        Mono<Void> shutdown = server.disposeGracefully(bound).cache();
        shutdown.subscribe();
        StepVerifier.create(clientEngine().connect(config().withPort(server.port())))
                .expectError(ConnectionRejectedException.class)
                .verify(waitTime());
        // The request in flight is answered, then the server closes well before the bound.
        RdmaMessage m = answer.block(waitTime());
        assertNotNull(m);
        assertEquals("done", new String(m.toByteArray(), StandardCharsets.UTF_8));
        m.release();
        StepVerifier.create(shutdown).expectComplete().verify(waitTime());
        assertTrue(System.nanoTime() - start < bound.toNanos() * 3 / 4, "ended by the work, not the bound");
        assertEquals(0, server.connectionCount());
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitTime()); // the client hears it
    }

    @Test
    void workStillRunningAtTheGracefulShutdownsBoundIsClosed() {
        Sinks.One<RdmaConnection> serverSide = Sinks.one();
        server = serverEngine().bind(config(), conn -> {
            serverSide.tryEmitValue(conn);
            return conn.onDispose(); // runs until its connection closes
        }).block(waitTime());
        assertNotNull(server);
        client = clientEngine().connect(config().withPort(server.port())).block(waitTime());
        assertNotNull(client);
        RdmaConnection s = serverSide.asMono().block(waitTime());
        assertNotNull(s);
        long start = System.nanoTime();
        StepVerifier.create(server.disposeGracefully(Duration.ofMillis(300))).expectComplete().verify(waitTime());
        long took = System.nanoTime() - start;
        assertTrue(took >= Duration.ofMillis(300).toNanos(), "waited for the bound: " + took);
        AtomicReference<Throwable> late = new AtomicReference<>();
        StepVerifier.create(s.send(text("late"))).expectErrorSatisfies(late::set).verify(waitTime());
        assertTrue(late.get() instanceof InvalidRequestException || late.get() instanceof ConnectionClosedException,
                String.valueOf(late.get()));
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitTime()); // the client hears the disconnect
    }

    @Test
    void aCancelledGracefulShutdownStillEndsAtTheBound() {
        server = echoServer();
        client = clientEngine().connect(config().withPort(server.port())).block(waitTime());
        assertNotNull(client);
        server.disposeGracefully(Duration.ofMillis(200)).subscribe().dispose();
        StepVerifier.create(server.onDispose()).expectComplete().verify(waitTime());
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitTime());
    }

    @Test
    void engineShutdownClosesEverythingIsIdempotentAndTheEngineWorksAgainAfterwards() {
        server = echoServer();
        client = connectAndEcho(server);
        RegisteredBuffer region = client.memory().allocateRegistered(4096, RemoteAccess.READ); // a user registration

        StepVerifier.create(Mono.when(clientEngine().shutdown(), serverEngine().shutdown())).expectComplete()
                .verify(waitTime());
        assertTrue(client.isDisposed());
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitTime());
        StepVerifier.create(server.onDispose()).expectComplete().verify(waitTime());
        assertEverythingReleased();
        assertTrue(region.isReleased() || region.remoteAccess().contains(RemoteAccess.READ)); // the handle may outlive it
        StepVerifier.create(clientEngine().shutdown()).expectComplete().verify(waitTime()); // idempotent

        server = echoServer();
        client = connectAndEcho(server);
    }
}
