package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Host names are resolved off the engine's one rdma_cm thread (B4.10): a lookup, slow or failing, of one
 * client, server, datagram endpoint or device memory never stalls connection set-up and teardown of the
 * others. Shown with the rdma_cm thread held: a connect, bind, datagram bind or memory lookup of a name that
 * does not resolve fails, typed, while that thread is still busy. Loopback only: holding the engine's
 * rdma_cm thread needs the in-JVM engine.
 */
@Timeout(60)
class HostResolutionLoopbackTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final String UNRESOLVABLE = "no-such-host.invalid"; // RFC 2606: never resolves

    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void close() {
        release.countDown();
        try {
            engine.shutdown().block(WAIT);
        } finally {
            stack.close();
        }
    }

    private void holdTheCmThread() throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        engine.cm().execute(() -> {
            held.countDown();
            try {
                release.await(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the rdma_cm thread never ran the task");
    }

    @Test
    void aConnectToAHostThatDoesNotResolveFailsTypedWithoutTheRdmaCmThread() throws InterruptedException {
        holdTheCmThread();
        StepVerifier.create(engine.connect(RdmaTransportConfig.defaults().withHost(UNRESOLVABLE).withPort(7471)))
                .expectErrorSatisfies(e -> {
                    assertEquals(RdmaConnectException.class, e.getClass(), e.toString());
                    assertEquals(ConnectionEvent.Type.ADDRESS_ERROR, ((RdmaConnectException) e).reason());
                    assertTrue(e.getMessage().contains(UNRESOLVABLE), e.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void aBindToAHostThatDoesNotResolveFailsTypedWithoutTheRdmaCmThread() throws InterruptedException {
        holdTheCmThread();
        StepVerifier.create(engine.bind(RdmaTransportConfig.defaults().withHost(UNRESOLVABLE).withPort(0),
                        conn -> conn.onDispose()))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaException, e.toString());
                    assertTrue(e.getMessage().contains(UNRESOLVABLE), e.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void aDeviceMemoryLookupOfAHostThatDoesNotResolveFailsTypedWithoutTheRdmaCmThread() throws InterruptedException {
        holdTheCmThread();
        StepVerifier.create(engine.memory(UNRESOLVABLE))
                .expectErrorSatisfies(e -> {
                    assertEquals(RdmaException.class, e.getClass(), e.toString());
                    assertTrue(e.getMessage().contains(UNRESOLVABLE), e.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void aDatagramBindToAHostThatDoesNotResolveFailsTypedWithoutTheRdmaCmThread() throws InterruptedException {
        holdTheCmThread();
        StepVerifier.create(engine.bindDatagram(RdmaTransportConfig.defaults().withHost(UNRESOLVABLE).withPort(0)))
                .expectErrorSatisfies(e -> {
                    assertEquals(RdmaException.class, e.getClass(), e.toString());
                    assertTrue(e.getMessage().contains(UNRESOLVABLE), e.getMessage());
                })
                .verify(WAIT);
    }
}
