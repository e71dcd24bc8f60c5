package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The receive side of a connection under faults only the loopback device injects (delayed rdma_cm events,
 * a busy shared poller, a reused QP number). What rxe can show too is in {@link PlainPeerScenario}.
 */
@Timeout(60)
class ReceiveSideLoopbackTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * The receives a server handler asks for are posted before rdma_accept: a peer without credits (here an
     * engine client with CREDIT_FLOW_CONTROL off and no RNR retry) may send as soon as it is established,
     * while the server's own ESTABLISHED is still on its way (delayed 1 s here: a busy rdma_cm thread).
     * Loopback only: the delay is an injected fault.
     */
    @Test
    void aServerPostsTheHandlersReceivesBeforeAcceptingSoAPeerWithoutCreditsMaySendAtOnce() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        Sinks.One<String> got = Sinks.one();
        server = engine.bind(config, c -> c.receive().next().doOnNext(m -> {
            try {
                got.tryEmitValue(new String(m.toByteArray(), StandardCharsets.UTF_8));
            } finally {
                m.release();
            }
        }).then(c.onDispose())).block(WAIT);
        assertNotNull(server);
        stack.faults().delayEvents(CmEventType.ESTABLISHED, Duration.ofSeconds(1), 1); // the server's comes first
        client = engine.connect(config.withPort(server.port()).withOption(RdmaOption.RNR_RETRY_COUNT, 0)).block(WAIT);
        assertNotNull(client);
        StepVerifier.create(client.send(ByteBuffer.wrap("at once".getBytes(StandardCharsets.UTF_8))))
                .expectComplete()
                .verify(WAIT);
        assertEquals("at once", got.asMono().block(WAIT));
    }

    /**
     * rdma_cm brings a QP up with min_rnr_timer 0 (655 ms): the engine sets MIN_RNR_TIMER on both sides once
     * their QPs are in RTS (the loopback resets the code on connect as rdma_cm's RTR transition does).
     */
    @Test
    void bothSidesQueuePairsCarryTheMinRnrTimerOption() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.MIN_RNR_TIMER, 5);
        bindServer(config);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        assertNotNull(serverConnection.asMono().block(WAIT));
        List<LoopbackCmId> connected = stack.liveIds().stream().filter(id -> id.queuePair() != null).toList();
        assertEquals(2, connected.size(), "the client's and the server's ids");
        for (LoopbackCmId id : connected) {
            assertEquals(5, id.queuePair().minRnrTimer(), id.description());
        }
    }

    /**
     * A server connection disposed by its handler before the accept (no credits, so nothing else waits) rejects
     * its peer with SERVER_ERROR while its id still exists, and the server's events say REJECTED.
     */
    @Test
    void aConnectionTheHandlerDisposesBeforeTheAcceptIsRejectedWithServerError() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        server = engine.bind(config, c -> {
            c.dispose();
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        reactor.core.publisher.Mono<ConnectionEvent> rejected = server.connectionEvents()
                .filter(e -> e.type() == ConnectionEvent.Type.REJECTED).next().cache();
        rejected.subscribe();
        StepVerifier.create(engine.connect(config.withPort(server.port())))
                .expectErrorSatisfies(e -> assertEquals(ConnectionRejectedException.Rejection.SERVER_ERROR,
                        assertInstanceOf(ConnectionRejectedException.class, e).rejection(), e.toString()))
                .verify(WAIT);
        assertNotNull(rejected.block(WAIT));
    }

    private static String text(RdmaMessage m) {
        return new String(m.toByteArray(), StandardCharsets.UTF_8);
    }

    private static void awaitTrue(java.util.function.BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            Thread.onSpinWait();
        }
    }

    /**
     * receive().next() with messages waiting, delivered on a callback worker: next() cancels from its first
     * onNext while the others are already handed to the worker. Those would reach a cancelled sink, which
     * Reactor's next() drops with onNextDropped (no discard hook sees it): their buffers were lost for good.
     * They are released instead, so every buffer is back in the pool once both sides closed. Loopback only: it reads the pool's counter.
     */
    @Test
    void messagesEmittedIntoACancelledSubscriberAreReleased() {
        Scheduler callbacks = Schedulers.newSingle("callbacks");
        try {
            RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false)
                    .withCallbackScheduler(callbacks);
            bindServer(config);
            client = engine.connect(config.withPort(server.port())).block(WAIT);
            assertNotNull(client);
            RdmaConnection s = serverConnection.asMono().block(WAIT);
            assertNotNull(s);
            BufferPool pool = (BufferPool) s.memory();
            for (int i = 0; i < 4; i++) { // each lands in a receive posted ahead of demand, and waits
                client.send(ByteBuffer.wrap(("m" + i).getBytes(StandardCharsets.UTF_8))).block(WAIT);
            }
            RdmaMessage first = s.receive().next().block(WAIT);
            assertNotNull(first);
            assertEquals("m0", text(first));
            first.release();
            client.dispose();
            client.onDispose().block(WAIT);
            s.onDispose().block(WAIT);
            // Every receive buffer goes back to the pool once its connection closed and its message (if any)
            // was released: nothing else of these connections holds pooled memory.
            awaitTrue(() -> pool.pooledBytesInUse() == 0, "every buffer back in the pool (in use "
                    + pool.pooledBytesInUse() + " bytes)");
        } finally {
            callbacks.dispose();
        }
    }

    /**
     * receive(decoder) on a callback worker, the decoder throwing on the third message: the error comes after
     * the two values decoded before it (which were handed to the worker first), not before them. The worker
     * is held busy until the decoder has run three times, so the order is decided on the worker alone.
     */
    @Test
    void aThrowingDecodersErrorComesAfterTheValuesDecodedBeforeIt() {
        Scheduler callbacks = Schedulers.newSingle("callbacks");
        try {
            RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false)
                    .withCallbackScheduler(callbacks);
            bindServer(config);
            client = engine.connect(config.withPort(server.port())).block(WAIT);
            assertNotNull(client);
            RdmaConnection s = serverConnection.asMono().block(WAIT);
            assertNotNull(s);
            for (int i = 0; i < 3; i++) {
                s.send(ByteBuffer.wrap(("m" + i).getBytes(StandardCharsets.UTF_8))).block(WAIT);
            }
            CountDownLatch release = new CountDownLatch(1);
            callbacks.schedule(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            AtomicInteger calls = new AtomicInteger();
            Flux<String> decoded = client.receive(m -> {
                if (calls.getAndIncrement() == 2) {
                    throw new IllegalStateException("bad message 2");
                }
                return text(m);
            });
            List<String> signals = new java.util.concurrent.CopyOnWriteArrayList<>();
            Sinks.Empty<Void> ended = Sinks.empty();
            decoded.subscribe(signals::add, e -> {
                signals.add("error: " + e.getMessage());
                ended.tryEmitEmpty();
            }, ended::tryEmitEmpty);
            awaitTrue(() -> calls.get() == 3, "three messages decoded");
            release.countDown();
            ended.asMono().block(WAIT);
            assertEquals(List.of("m0", "m1", "error: bad message 2"), signals);
        } finally {
            callbacks.dispose();
        }
    }
}
