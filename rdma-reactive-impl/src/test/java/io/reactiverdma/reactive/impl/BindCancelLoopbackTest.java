package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A {@code bind()} (server or datagram endpoint) cancelled before it finishes leaves nothing bound: the port is
 * free again once the engine has handled the bind, as it is when {@code bindNow(timeout)} times out just before
 * the bind completes. Loopback only: the test holds the engine's rdma_cm thread to make the bind finish after
 * the cancel, which only an in-JVM engine lets it do.
 */
@Timeout(60)
class BindCancelLoopbackTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final int PORT = 7600;

    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);

    @AfterEach
    void close() {
        try {
            engine.shutdown().block(WAIT);
        } finally {
            stack.close();
        }
    }

    private static RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(PORT);
    }

    @Test
    void aServerBindCancelledBeforeItFinishesLeavesThePortFree() throws Exception {
        CountDownLatch release = holdTheCmThread();
        Disposable bind = engine.bind(config(), conn -> conn.onDispose()).subscribe();
        bind.dispose();
        release.countDown();
        awaitCmThread();

        DisposableRdmaServer again = engine.bind(config(), conn -> conn.onDispose()).block(WAIT);
        assertNotNull(again);
        assertEquals(PORT, again.port());
        again.disposeNow(WAIT);
    }

    @Test
    void bindNowTimingOutBeforeTheBindFinishesLeavesThePortFree() throws Exception {
        CountDownLatch release = holdTheCmThread();
        Mono<DisposableRdmaServer> bind = engine.bind(config(), conn -> conn.onDispose());
        // Mono.block(timeout) cancels on timeout, as bindNow(timeout) does.
        IllegalStateException timedOut = assertThrows(IllegalStateException.class,
                () -> bind.block(Duration.ofMillis(50)));
        assertTrue(timedOut.getMessage().contains("Timeout"), timedOut.getMessage());
        release.countDown();
        awaitCmThread();

        DisposableRdmaServer again = engine.bind(config(), conn -> conn.onDispose()).block(WAIT);
        assertNotNull(again);
        again.disposeNow(WAIT);
    }

    @Test
    void aDatagramBindCancelledBeforeItFinishesLeavesThePortFree() throws Exception {
        CountDownLatch release = holdTheCmThread();
        Disposable bind = engine.bindDatagram(config()).subscribe();
        bind.dispose();
        release.countDown();
        awaitCmThread();

        RdmaDatagramEndpoint again = engine.bindDatagram(config()).block(WAIT);
        assertNotNull(again);
        again.disposeNow(WAIT);
    }

    /** Blocks the engine's rdma_cm thread until the returned latch is counted down. */
    private CountDownLatch holdTheCmThread() throws InterruptedException {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        engine.cm().execute(() -> {
            held.countDown();
            try {
                release.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(held.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the rdma_cm thread never ran the task");
        return release;
    }

    /** Returns once every task queued on the rdma_cm thread before this call (the bind's among them) has run. */
    private void awaitCmThread() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        engine.cm().execute(done::countDown);
        assertTrue(done.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the rdma_cm thread is stuck");
    }
}
