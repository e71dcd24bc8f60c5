package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Two defects the loopback device found in the engine before the owner-thread rewrite (both failed on it):
 * a poll failure that hung every connection of its CQ, and a fatal QP error that never closed its
 * connection. Each test states the behaviour a connection needs.
 */
@Timeout(60)
class LoopbackEngineDefectsTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    private void connect() {
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
        if (server == null) {
            server = engine.bind(config, c -> {
                serverConnection.tryEmitValue(c);
                return c.onDispose();
            }).block(WAIT);
        }
        assertNotNull(server);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
    }

    /**
     * An exception from ibv_poll_cq (the loopback throws it once, on the first CQ, while the connection is
     * being set up) used to end the poller thread for good, and every connection on that CQ hung. A failed
     * poll means the CQ cannot be trusted any more: the poller fails its connections, so the attempt under
     * way fails typed and at once (not at its connect timeout), and the next connection gets a new CQ.
     */
    @Test
    void aPollFailureFailsTheConnectionBeingSetUpAndTheNextOneWorks() {
        stack.faults().failCqCalls(null, LoopbackCompletionQueue.Call.POLL, 1,
                new IllegalStateException("injected ibv_poll_cq failure"));
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(io.reactiverdma.reactive.RdmaOption.CONNECT_TIMEOUT, java.time.Duration.ofSeconds(60));
        server = engine.bind(config, c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        StepVerifier.create(engine.connect(config.withPort(server.port())))
                .expectError(io.reactiverdma.reactive.RdmaConnectException.class)
                .verify(WAIT);
        connect();
    }

    /**
     * A fatal QP error (async event QP_FATAL; the device moves the QP to ERR and flushes it) leaves the
     * connection open for ever: the engine never reads async events, and a flushed completion does not close
     * a connection. Expected: the connection closes (onDispose completes).
     */
    @Test
    void aFatalQpErrorMustCloseTheConnection() {
        connect();
        assertNotNull(serverConnection.asMono().block(WAIT));
        LoopbackCmId clientId = stack.liveIds().stream()
                .filter(id -> !id.isConnectRequest() && id.queuePair() != null)
                .findFirst().orElseThrow();
        stack.faults().raiseQpEvent(clientId.queuePair(), AsyncEventType.QP_FATAL);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }
}
