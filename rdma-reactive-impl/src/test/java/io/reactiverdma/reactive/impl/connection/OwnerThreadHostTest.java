package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The single-writer rule is checked, not only commented: with assertions on (Surefire's default {@code -ea})
 * a poller-owned method of a live connection called from another thread fails at once with an
 * {@link AssertionError} naming the owner; the same call handed to the poller runs. Loopback only: what is
 * checked is the engine's threading, not the device.
 */
@Timeout(60)
class OwnerThreadHostTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private DisposableRdmaServer server;
    private RdmaConnection client;
    private EngineConnection core;

    @BeforeEach
    void connect() {
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
        server = engine.bind(config, RdmaConnection::onDispose).block(WAIT);
        assertNotNull(server);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        core = ((ConnectionHandle) client).core();
    }

    @AfterEach
    void close() {
        try {
            client.dispose();
            client.onDispose().block(WAIT);
            server.disposeNow(WAIT);
        } finally {
            stack.close();
        }
    }

    @Test
    void aSendQueueFlushFromAnotherThreadFailsTheOwnerThreadAssertion() {
        AssertionError e = assertThrows(AssertionError.class, () -> core.send.flush());
        assertTrue(e.getMessage().contains("owned by completion poller " + core.poller.name()), e.getMessage());
    }

    @Test
    void aConnectionFlushFromAnotherThreadFailsTheOwnerThreadAssertion() {
        AssertionError e = assertThrows(AssertionError.class, () -> core.flush());
        assertTrue(e.getMessage().contains(Thread.currentThread().getName()), e.getMessage());
    }

    @Test
    void aReceiveQueueDeliveryFromAnotherThreadFailsTheOwnerThreadAssertion() {
        assertOwnerThreadAssertion(() -> core.receive.deliver());
    }

    @Test
    void aCreditWordHandshakeStepFromAnotherThreadFailsTheOwnerThreadAssertion() {
        assertOwnerThreadAssertion(() -> core.handshake.established());
    }

    @Test
    void aStreamingSendPollerMethodFromAnotherThreadFailsTheOwnerThreadAssertion() {
        StreamingSend stream = new StreamingSend(core.send, core.poller, null, null, 1, 1, null);
        assertOwnerThreadAssertion(stream::hasStaged);
    }

    @Test
    void sharedReceiveQueueMethodsFromAnotherThreadFailTheOwnerThreadAssertion() throws Exception {
        CompletableFuture<EngineConnection> accepted = new CompletableFuture<>();
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16);
        DisposableRdmaServer srqServer = engine.bind(config, c -> {
            accepted.complete(((ConnectionHandle) c).core());
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(srqServer);
        RdmaConnection srqClient = engine.connect(config.withPort(srqServer.port())).block(WAIT);
        assertNotNull(srqClient);
        try {
            EngineConnection member = accepted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            SharedReceiveMember share = (SharedReceiveMember) member.receive.source();
            SharedReceives srq = share.owner();
            assertOwnerThreadAssertion(srq::refill);
            assertOwnerThreadAssertion(share::established);
            assertOwnerThreadAssertion(() -> member.receive.deliver());
        } finally {
            srqClient.dispose();
            srqClient.onDispose().block(WAIT);
            srqServer.disposeNow(WAIT);
        }
    }

    private void assertOwnerThreadAssertion(Runnable call) {
        AssertionError e = assertThrows(AssertionError.class, call::run, "no owner-thread assertion");
        assertTrue(e.getMessage().contains("owned by completion poller"), e.getMessage());
    }

    @Test
    void theSameCallsHandedToThePollerRun() throws Exception {
        CompletableFuture<Integer> posted = new CompletableFuture<>();
        core.poller.execute(() -> {
            try {
                posted.complete(core.flush() + core.send.flush());
            } catch (Throwable t) {
                posted.completeExceptionally(t);
            }
        });
        assertEquals(0, posted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS), "nothing was waiting to be posted");
    }
}
