package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How the end of a server handler is reported, on any stack (a subclass per stack): a handler that ends
 * because its peer closed the connection in order is not a failure, so the engine logs nothing at
 * SEVERE (the getting-started echo server, {@code conn.send(conn.receive().map(..))}, with a client that
 * disposes normally); a handler that fails for its own reason is still logged, with its exception.
 *
 * <p>The engine logs through {@code System.Logger}, which without a logging framework on the class path
 * is {@code java.util.logging}: the records are captured there.
 */
abstract class HandlerEndContract {
    private static final String ENGINE_LOGGER = "io.reactiverdma.reactive.impl";

    /** Held strongly: java.util.logging keeps only weak references to its loggers. */
    private final Logger engineLogger = Logger.getLogger(ENGINE_LOGGER);
    private final List<LogRecord> severe = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.SEVERE.intValue()) {
                severe.add(r);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private DisposableRdmaServer server;
    private final Sinks.One<RdmaConnection> serverSide = Sinks.one();
    private RdmaConnection client;

    /** The stack under test (its engine, device address, step time and close). */
    abstract StackFixture stack();

    private RdmaEngine engine() {
        return stack().engine();
    }

    private String host() {
        return stack().host();
    }

    private Duration waitBound() {
        return stack().waitTime();
    }

    @BeforeEach
    void captureEngineLog() {
        engineLogger.addHandler(capture);
    }

    @AfterEach
    void closeAndStopCapturing() {
        try {
            if (client != null) {
                client.dispose();
                client.onDispose().block(waitBound());
            }
            if (server != null) {
                server.disposeNow(waitBound());
            }
        } finally {
            engineLogger.removeHandler(capture);
            stack().close();
        }
    }

    /** The connect timeout is the stack's step bound: a cold JVM's first connect under emulation takes longer than 10 s. */
    private RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost(host()).withPort(0)
                .withOption(RdmaOption.CONNECT_TIMEOUT, waitBound());
    }

    /** Binds a server whose handler is {@code handler}; {@code ended} counts down after the engine saw it end. */
    private void bind(Function<RdmaConnection, Publisher<Void>> handler, CountDownLatch ended) {
        // doFinally runs after the engine's own subscriber got the terminal signal (and logged, if it does).
        server = engine().bind(config(), c -> {
            serverSide.tryEmitValue(c);
            return Mono.from(handler.apply(c)).doFinally(s -> ended.countDown());
        })
                .block(waitBound());
        assertNotNull(server);
        client = engine().connect(config().withPort(server.port())).block(waitBound());
        assertNotNull(client);
    }

    private String exchange(String text) {
        Mono<String> reply = client.receive().next().map(m -> {
            try (m) {
                return StandardCharsets.UTF_8.decode(m.data()).toString();
            }
        });
        ByteBuffer hello = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        return Mono.zip(reply, client.send(hello).thenReturn(true), (r, sent) -> r).block(waitBound());
    }

    private static String describe(List<LogRecord> records) {
        return records.stream().map(r -> r.getMessage() + (r.getThrown() != null ? ": " + r.getThrown() : ""))
                .collect(Collectors.joining("; "));
    }

    @Test
    void aPeersOrderlyDisconnectEndsTheEchoHandlerWithoutASevereLog() throws InterruptedException {
        CountDownLatch ended = new CountDownLatch(1);
        bind(conn -> conn.send(conn.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        })), ended);
        assertEquals("hello, RDMA", exchange("hello, RDMA"));
        client.dispose();
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitBound());
        assertTrue(ended.await(waitBound().toMillis(), TimeUnit.MILLISECONDS), "the handler did not end");
        // the server's side closes too, without anything logged as a failure
        StepVerifier.create(serverSide.asMono().flatMap(RdmaConnection::onDispose)).expectComplete()
                .verify(waitBound());
        assertTrue(severe.isEmpty(), "logged at SEVERE: " + describe(severe));
    }

    @Test
    void aHandlerThatFailsForItsOwnReasonIsStillLogged() throws InterruptedException {
        CountDownLatch ended = new CountDownLatch(1);
        bind(conn -> conn.receive().next().flatMap(m -> {
            m.release();
            return Mono.<Void>error(new IllegalStateException("the application's handler broke"));
        }), ended);
        client.send(ByteBuffer.wrap(new byte[] {1, 2, 3})).block(waitBound());
        assertTrue(ended.await(waitBound().toMillis(), TimeUnit.MILLISECONDS), "the handler did not end");
        assertTrue(severe.stream().anyMatch(r -> r.getThrown() instanceof IllegalStateException
                        && r.getThrown().getMessage().equals("the application's handler broke")),
                "not logged at SEVERE with its exception; logged: " + describe(severe));
    }
}
