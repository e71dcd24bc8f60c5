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
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The receive side of a connection under faults only the loopback device injects (delayed rdma_cm events,
 * a busy shared poller, a reused QP number). What rxe can show too is in {@link PlainPeerScenario}.
 */
@Timeout(60)
class ReceiveSideLoopbackTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * The receives a server handler asks for are posted before rdma_accept: a peer without credits (here an
     * engine client with CREDIT_FLOW_CONTROL off, without RNR retries: the server's RNR_RETRY_COUNT 0, which
     * rdma_cm applies to the client's sends) may send as soon as it is established,
     * while the server's own ESTABLISHED is still on its way (delayed 1 s here: a busy rdma_cm thread).
     * Loopback only: the delay is an injected fault.
     */
    @Test
    void aServerPostsTheHandlersReceivesBeforeAcceptingSoAPeerWithoutCreditsMaySendAtOnce() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        Sinks.One<String> got = Sinks.one();
        server = engine.bind(config.withOption(RdmaOption.RNR_RETRY_COUNT, 0), c -> c.receive().next().doOnNext(m -> {
            try {
                got.tryEmitValue(new String(m.toByteArray(), StandardCharsets.UTF_8));
            } finally {
                m.release();
            }
        }).then(c.onDispose())).block(WAIT);
        assertNotNull(server);
        stack.faults().delayEvents(CmEventType.ESTABLISHED, Duration.ofSeconds(1), 1); // the server's comes first
        client = engine.connect(config.withPort(server.port())).block(WAIT);
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
     * rdma_cm applies the RNR_RETRY_COUNT each side gives (in its connect request or accept reply) to the other
     * side's sends, and so does the loopback device. Before, it applied each side's own by default, so a test
     * that set 0 on a client to make any RNR of the client's sends fatal was stricter there than on rxe
     * ("expected: <[0, 5]> but was: <[5, 0]>").
     */
    @Test
    void eachSidesRnrRetryCountGovernsThePeersSends() {
        RdmaTransportConfig config = localConfig();
        bindServer(config.withOption(RdmaOption.RNR_RETRY_COUNT, 5));
        client = engine.connect(config.withPort(server.port()).withOption(RdmaOption.RNR_RETRY_COUNT, 0)).block(WAIT);
        assertNotNull(client);
        assertNotNull(serverConnection.asMono().block(WAIT));
        LoopbackCmId serverSide = stack.passiveIds().stream().filter(id -> id.queuePair() != null).findFirst()
                .orElseThrow();
        LoopbackCmId clientSide = stack.liveIds().stream().filter(id -> id.queuePair() != null && id != serverSide)
                .findFirst().orElseThrow();
        assertEquals(List.of(0, 5), List.of(serverSide.queuePair().rnrRetryCount(),
                clientSide.queuePair().rnrRetryCount()),
                "the server's QP's count (the client's 0), the client's QP's (the server's 5)");
    }

    /**
     * A server's connection on a shared receive queue defaults to the longer timer (26, 81.92 ms: see
     * SharedReceiveAttackScenario#anHonestClientRidesOutAFloodWhileTheServerIsStalled), its client to 12.
     */
    @Test
    void aServerOnASharedReceiveQueueDefaultsToALongerMinRnrTimer() {
        RdmaTransportConfig config = localConfig();
        bindServer(config.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16));
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        assertNotNull(serverConnection.asMono().block(WAIT));
        assertEquals(List.of(12, 26), stack.liveIds().stream().filter(id -> id.queuePair() != null)
                .map(id -> id.queuePair().minRnrTimer()).sorted().toList(), "the client's code, the server's");
    }

    /** ... unless MIN_RNR_TIMER is set: then that. */
    @Test
    void aServerOnASharedReceiveQueueTakesTheMinRnrTimerSet() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.MIN_RNR_TIMER, 12);
        bindServer(config.withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16));
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        assertNotNull(serverConnection.asMono().block(WAIT));
        assertEquals(List.of(12, 12), stack.liveIds().stream().filter(id -> id.queuePair() != null)
                .map(id -> id.queuePair().minRnrTimer()).toList());
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
     * A callback scheduler disposed while a connection still delivers on it refuses the delivery
     * ({@code RejectedExecutionException}): the subscriber's {@code receive()} fails with that refusal, the message
     * goes back to the pool instead of being lost, and the poller, which the CQ's other connections share, goes
     * on: the peer's next send still completes, and every buffer is back once the connection closed.
     */
    @Test
    void aDisposedCallbackSchedulerFailsTheReceiveStreamAndLosesNoBuffer() {
        Scheduler callbacks = Schedulers.newSingle("callbacks");
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        bindServer(config.withCallbackScheduler(callbacks));
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        BufferPool pool = (BufferPool) s.memory();
        callbacks.dispose();
        StepVerifier.create(s.receive().doOnSubscribe(x -> client.send(ByteBuffer.wrap(new byte[] {1})).subscribe()))
                .expectError(java.util.concurrent.RejectedExecutionException.class)
                .verify(WAIT);
        client.send(ByteBuffer.wrap(new byte[] {2})).block(WAIT);
        client.dispose();
        client.onDispose().block(WAIT);
        awaitTrue(() -> pool.pooledBytesInUse() == 0, "every buffer back in the pool (in use "
                + pool.pooledBytesInUse() + " bytes)");
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

    /**
     * A credit hello must not be posted once the connection is closing (the cm thread may be destroying the
     * QP). Set-up: a raw-verbs peer that agreed on credits; the server connection's close is made to run
     * while the rdma_cm thread is held busy (a second server's handler blocks it), so the QP stays in RTS;
     * then the peer's hello arrives and completes a receive on the server. The server used to answer it with
     * its own hello although it was closing; the peer must receive nothing. Loopback only: it holds the
     * engine's rdma_cm thread and uses a raw peer on the loopback device.
     */
    @Test
    void aClosingConnectionPostsNoCreditHello() throws Exception {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.RECEIVE_BUFFER_SIZE, 256);
        bindServer(config);
        CountDownLatch cmHeld = new CountDownLatch(1);
        CountDownLatch releaseCm = new CountDownLatch(1);
        io.reactiverdma.reactive.DisposableRdmaServer blocker = engine.bind(config, c -> {
            cmHeld.countDown();
            try {
                releaseCm.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(blocker);
        io.reactiverdma.reactive.impl.verbs.CmChannel channel = stack.openCmChannel();
        io.reactiverdma.reactive.impl.verbs.CmId id = channel.createId(io.reactiverdma.cm.PortSpace.TCP);
        io.reactiverdma.reactive.impl.verbs.ProtectionDomain pd = null;
        io.reactiverdma.reactive.impl.verbs.CompletionQueue cq = null;
        io.reactiverdma.reactive.impl.verbs.Registration word = null;
        io.reactiverdma.reactive.impl.verbs.Registration buf = null;
        try {
            id.resolveAddress(null, new java.net.InetSocketAddress("127.0.0.1", server.port()), 1000);
            PlainPeer.next(channel, CmEventType.ADDR_RESOLVED, WAIT);
            id.resolveRoute(1000);
            PlainPeer.next(channel, CmEventType.ROUTE_RESOLVED, WAIT);
            pd = id.device().allocateProtectionDomain();
            cq = id.device().createCompletionQueue(16, false, 1, "raw-credit-peer");
            io.reactiverdma.reactive.impl.verbs.QueuePair qp =
                    id.createQueuePair(pd, cq, new io.reactiverdma.reactive.impl.verbs.QpSpec(4, 4, 0));
            word = pd.register(ByteBuffer.allocateDirect(8), io.reactiverdma.verbs.AccessFlags.LOCAL_WRITE
                    | io.reactiverdma.verbs.AccessFlags.REMOTE_WRITE);
            buf = pd.register(ByteBuffer.allocateDirect(256), io.reactiverdma.verbs.AccessFlags.LOCAL_WRITE);
            io.reactiverdma.verbs.ReceiveWorkRequests recv = new io.reactiverdma.verbs.ReceiveWorkRequests(1, 1);
            recv.add(1, buf.address(), 256, buf.lkey());
            qp.postReceive(recv); // where the server's hello would land
            byte[] offer = new io.reactiverdma.reactive.impl.connection.Negotiation(true, word.address(), word.rkey(),
                    256).encode();
            id.connect(new io.reactiverdma.reactive.impl.verbs.ConnectSpec(4, 4, 3, 7, offer));
            PlainPeer.next(channel, CmEventType.ESTABLISHED, WAIT);
            RdmaConnection s = serverConnection.asMono().block(WAIT);
            assertNotNull(s);
            assertTrue(s.creditFlowControl(), "credits agreed");
            assertNotNull(s.events().filter(e -> e.type() == ConnectionEvent.Type.ESTABLISHED).next().block(WAIT));
            // A send that waits for credits: its failure shows that the close ran on the server's poller.
            reactor.core.publisher.Mono<Void> waiting = s.send(ByteBuffer.wrap(new byte[] {1})).cache();
            waiting.subscribe(null, e -> { });
            engine.connect(config.withPort(blocker.port())).subscribe(null, e -> { });
            assertTrue(cmHeld.await(10, java.util.concurrent.TimeUnit.SECONDS), "the rdma_cm thread held");
            s.dispose();
            StepVerifier.create(waiting).expectError(io.reactiverdma.reactive.ConnectionClosedException.class)
                    .verify(WAIT);
            // The peer's hello (a 0-byte SEND) lands in the server's hello receive: its QP is still in RTS.
            io.reactiverdma.verbs.SendWorkRequests hello = new io.reactiverdma.verbs.SendWorkRequests(1, 0);
            hello.add(2, io.reactiverdma.verbs.WrOpcode.SEND, io.reactiverdma.verbs.SendFlags.SIGNALED);
            qp.postSend(hello);
            int[] statuses = {-1, -1};
            io.reactiverdma.reactive.impl.verbs.CompletionQueue q = cq;
            awaitTrue(() -> {
                q.poll((wrId, status, opcode, vendorErr, byteLen, imm, wcFlags) -> statuses[(int) wrId - 1] = status);
                return statuses[1] != -1;
            }, "the peer's hello completed");
            assertEquals(io.reactiverdma.verbs.WcStatus.SUCCESS.value(), statuses[1], "the peer's hello was received");
            long deadline = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            while (System.nanoTime() - deadline < 0 && statuses[0] == -1) { // a bounded look for what must not come
                q.poll((wrId, status, opcode, vendorErr, byteLen, imm, wcFlags) -> statuses[(int) wrId - 1] = status);
            }
            assertEquals(-1, statuses[0], "the closing server posted its hello (the peer received it)");
        } finally {
            releaseCm.countDown();
            blocker.disposeNow(WAIT);
            id.destroyQueuePair();
            id.close();
            if (word != null) {
                word.deregister();
            }
            if (buf != null) {
                buf.deregister();
            }
            if (cq != null) {
                cq.close();
            }
            if (pd != null) {
                pd.close();
            }
            channel.close();
        }
    }
}
