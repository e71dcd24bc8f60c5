package io.reactiverdma.reactive.impl.datagram;

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
 * The single-writer rule of a datagram endpoint is checked as a connection's is: with assertions on
 * (Surefire's {@code -ea}) a poller-owned method of its receive or send side called from another thread fails
 * at once with an {@link AssertionError} naming the owner; the same calls handed to the poller run. Loopback
 * only: what is checked is the engine's threading, not the device.
 */
@Timeout(60)
class DatagramOwnerThreadHostTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private EngineDatagramEndpoint endpoint;

    @BeforeEach
    void bind() {
        endpoint = (EngineDatagramEndpoint) engine.bindDatagram(RdmaTransportConfig.defaults().withHost("10.77.0.1")
                .withPort(0)).block(WAIT);
        assertNotNull(endpoint);
    }

    @AfterEach
    void close() {
        try {
            endpoint.disposeNow(WAIT);
            engine.shutdown().block(WAIT);
        } finally {
            stack.close();
        }
    }

    private static void assertOwnerThreadAssertion(Runnable call) {
        AssertionError e = assertThrows(AssertionError.class, call::run, "no owner-thread assertion");
        assertTrue(e.getMessage().contains("owned by completion poller"), e.getMessage());
        assertTrue(e.getMessage().contains(Thread.currentThread().getName()), e.getMessage());
    }

    @Test
    void aReceivePostFromAnotherThreadFailsTheOwnerThreadAssertion() {
        assertOwnerThreadAssertion(endpoint.receiver::post);
    }

    @Test
    void aSendFlushFromAnotherThreadFailsTheOwnerThreadAssertion() {
        assertOwnerThreadAssertion(endpoint.sender::flush);
    }

    @Test
    void anEndpointFlushFromAnotherThreadFailsTheOwnerThreadAssertion() {
        assertOwnerThreadAssertion(endpoint::flush);
    }

    @Test
    void theSameCallsHandedToThePollerRun() throws Exception {
        CompletableFuture<Integer> posted = new CompletableFuture<>();
        endpoint.receiver.poller().execute(() -> {
            try {
                endpoint.flush();
                posted.complete(endpoint.sender.flush());
            } catch (Throwable t) {
                posted.completeExceptionally(t);
            }
        });
        assertEquals(0, posted.get(WAIT.toMillis(), TimeUnit.MILLISECONDS), "no send was waiting to be posted");
    }
}
