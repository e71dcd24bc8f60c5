package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue;
import io.reactiverdma.reactive.impl.loopback.LoopbackFaults;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One test per defect of the engine-core issue that the loopback device can show, each through the
 * engine's public entry points (connect, bind and the RdmaConnection API) so that it runs on the engine
 * before and after the rewrite. Client and server run on two engines of one loopback stack, so each side
 * has its own completion queues and pollers, as two hosts would.
 */
@Timeout(90)
class EngineCoreDefectsTest {
    static final Duration WAIT = Duration.ofSeconds(10);

    private final LoopbackClientServer fixture = new LoopbackClientServer();
    private final LoopbackStack stack = fixture.stack;
    private final RdmaEngine clientEngine = fixture.clientEngine;
    /** The server bound last; a test that closed it itself sets it to null (closing it again is harmless). */
    private DisposableRdmaServer server;
    private Scheduler scheduler;

    @AfterEach
    void tearDown() {
        try {
            fixture.close();
        } finally {
            if (scheduler != null) {
                scheduler.dispose();
            }
        }
    }

    private static RdmaTransportConfig config() {
        return LoopbackClientServer.config();
    }

    /** A server whose connections are handed to the test, and that keeps each open until the client closes. */
    private void bind(RdmaTransportConfig config) {
        server = fixture.bind(config);
    }

    private RdmaConnection connect(RdmaTransportConfig config) {
        return fixture.connect(config);
    }

    private RdmaConnection serverSide(int index) {
        return fixture.serverSide(index);
    }

    private static void consumeAll(RdmaConnection c) {
        c.receive().subscribe(RdmaMessage::release, e -> { });
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean causedBy(Throwable t, Throwable cause) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c == cause) {
                return true;
            }
        }
        return false;
    }

    /** The client's active cm id (not a listener, not a connect request's id). */
    private LoopbackCmId clientId() {
        return fixture.clientId();
    }

    /** True while some client-side connection (an active id with a queue pair) is still alive. */
    private boolean clientConnectionAlive() {
        return stack.liveIds().stream().anyMatch(id -> !id.isConnectRequest() && id.queuePair() != null);
    }

    /**
     * Waits (bounded) until no client-side connection is alive, while the server is still up: a server that
     * closes its side would disconnect a leaked client connection and hide the leak.
     */
    private void awaitNoClientConnection(boolean collectGarbage) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (clientConnectionAlive() && System.nanoTime() < deadline) {
            if (collectGarbage) {
                System.gc();
            }
            Thread.sleep(50);
        }
        assertTrue(!clientConnectionAlive(), "a client connection nobody holds is still open: " + stack.liveIds());
    }

    /** Everything but the engines' per-device resources is released (they live until an engine shutdown). */
    private void awaitConnectionResourcesReleased() {
        stack.resources().awaitReleased(WAIT, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL, Kind.CM_ID);
        assertTrue(stack.liveIds().stream().allMatch(id -> id.queuePair() == null && !id.isConnectRequest()),
                "only listeners are left: " + stack.liveIds());
    }

    // ------------------------------------------------------------------------------------------ 1
    /**
     * Defect 1: a poller whose poll/arm/await throws left every connection on its CQ unclosable (operations
     * hung, onDispose never completed) and new connections were still placed on its CQ.
     */
    @Test
    void aDeadPollerFailsItsConnectionsTypedAndTheyCloseAndNewConnectionsAvoidItsCq() {
        bind(config());
        RdmaConnection client = connect(config());
        consumeAll(serverSide(0));
        StepVerifier.create(client.send(text("warm"))).expectComplete().verify(WAIT);

        LoopbackCompletionQueue clientCq = stack.device("loopback0").completionQueues().get(0);
        IllegalStateException eio = new IllegalStateException("injected: ibv_poll_cq failed: EIO (device disassociated)");
        stack.faults().failCqCalls(clientCq, LoopbackCompletionQueue.Call.ANY, -1, eio);

        StepVerifier.create(client.send(text("after the poller died")))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof ConnectionClosedException, "typed: " + e);
                    assertTrue(causedBy(e, eio), "names the poller's failure as its cause: " + e);
                })
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);

        RdmaConnection second = connect(config());
        consumeAll(serverSide(1));
        StepVerifier.create(second.send(text("on a new CQ"))).expectComplete().verify(WAIT);
    }

    // ------------------------------------------------------------------------------------------ 2
    /**
     * Defect 2: a connection established just as the connect timeout fired was dropped by Reactor's
     * {@code timeout} (onNextDropped, not the discard hook) and leaked. Every attempt must end with a
     * connection the subscriber got, or with a timeout and nothing left behind.
     */
    @Test
    void aConnectionEstablishedAsTheConnectTimeoutFiresIsDeliveredOrClosedNeverLeaked() throws InterruptedException {
        bind(config());
        Duration timeout = Duration.ofMillis(150);
        RdmaTransportConfig c = config().withOption(RdmaOption.CONNECT_TIMEOUT, timeout).withPort(server.port());
        int delivered = 0;
        int timedOut = 0;
        for (int i = 0; i < 24; i++) {
            // ESTABLISHED arrives around the timeout: a little before, at, or a little after it.
            stack.faults().delayEvents(CmEventType.ESTABLISHED, timeout.plusMillis((i % 8) * 4 - 12), 1);
            try {
                RdmaConnection got = clientEngine.connect(c).block(WAIT);
                assertNotNull(got);
                delivered++;
                got.dispose();
                got.onDispose().block(WAIT);
            } catch (RdmaConnectException e) {
                timedOut++;
            }
            stack.faults().clear();
        }
        assertEquals(24, delivered + timedOut);
        awaitNoClientConnection(false);
        server.disposeNow(WAIT);
        server = null;
        awaitConnectionResourcesReleased();
    }

    /**
     * Defect 2, downstream: a value Reactor drops after connect() emitted it (what a user's own
     * {@code timeout} does with a late connection) must not leak the connection.
     */
    @Test
    void aConnectionDroppedByADownstreamOperatorIsClosed() throws InterruptedException {
        bind(config());
        AtomicInteger dropped = new AtomicInteger();
        clientEngine.connect(config().withPort(server.port())).subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnNext(RdmaConnection value) {
                dropped.incrementAndGet(); // like FluxTimeout's late onNext: the value goes nowhere
            }
        });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (dropped.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1, dropped.get());
        awaitNoClientConnection(true);
        server.disposeNow(WAIT);
        server = null;
        awaitConnectionResourcesReleased();
    }

    // ------------------------------------------------------------------------------------------ 3
    /**
     * Defect 3: cancelling an operation that waits for credits stranded what was queued behind it: a
     * WRITE (which needs no credit) waited for a credit the peer never granted.
     */
    @Test
    void cancellingAnOperationThatWaitsForCreditsLetsTheWorkBehindItGo() {
        bind(config());
        RdmaConnection client = connect(config());
        RdmaConnection peer = serverSide(0); // never subscribes to receive(): grants no credit
        assertTrue(client.creditFlowControl());
        RegisteredBuffer target = peer.memory().allocateRegistered(64, RemoteAccess.WRITE);
        RemoteRegion region = target.remoteRegion();
        RegisteredBuffer source = client.memory().allocate(64);

        Disposable blocked = client.send(text("waits for a credit forever")).subscribe();
        AtomicReference<Throwable> writeError = new AtomicReference<>();
        Sinks.Empty<Void> written = Sinks.empty();
        client.write(source, region).subscribe(null, writeError::set, written::tryEmitEmpty);
        StepVerifier.create(written.asMono()).expectSubscription().expectNoEvent(Duration.ofMillis(200))
                .thenCancel().verify(WAIT);

        blocked.dispose();
        StepVerifier.create(written.asMono()).expectComplete().verify(WAIT);
        source.release();
        target.release();
    }

    // ------------------------------------------------------------------------------------------ 4
    /**
     * Defect 4: one message object per receive buffer was reused, so a release through a stale reference
     * released the next message in the same buffer (which the device could then overwrite in use).
     */
    @Test
    void aStaleReferenceToAReleasedMessageCannotReleaseTheNextMessageInItsBuffer() {
        bind(config());
        RdmaConnection client = connect(config().withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 1));
        RdmaConnection peer = serverSide(0);
        List<RdmaMessage> received = new CopyOnWriteArrayList<>();
        Sinks.One<String> secondSeen = Sinks.one();
        client.receive().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(1);
            }

            @Override
            protected void hookOnNext(RdmaMessage m) {
                received.add(m);
                if (received.size() == 1) {
                    m.release();  // buffer 0 goes back and takes the next message
                    request(1);
                } else {
                    received.get(0).release(); // stale: the first message was released already
                    try {
                        secondSeen.tryEmitValue(StandardCharsets.UTF_8.decode(m.data()).toString());
                    } catch (RuntimeException e) {
                        secondSeen.tryEmitError(e);
                    }
                }
            }
        });
        StepVerifier.create(peer.send(text("first"))).expectComplete().verify(WAIT);
        StepVerifier.create(peer.send(text("second"))).expectComplete().verify(WAIT);
        StepVerifier.create(secondSeen.asMono()).expectNext("second").expectComplete().verify(WAIT);
        received.get(1).release();
    }

    // ------------------------------------------------------------------------------------------ 5
    /**
     * Defect 5: with a callback scheduler, receive() was publishOn(callbacks, depth), which requested
     * {@code depth} up front: receives were posted (and credits granted) whatever the subscriber asked for.
     */
    @Test
    void withACallbackSchedulerReceivesArePostedOnlyForTheSubscribersDemand() {
        bind(config());
        scheduler = Schedulers.newSingle("app-callbacks");
        RdmaConnection client = connect(config().withCallbackScheduler(scheduler));
        RdmaConnection peer = serverSide(0);
        AtomicInteger got = new AtomicInteger();
        client.receive().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(1);
            }

            @Override
            protected void hookOnNext(RdmaMessage m) {
                got.incrementAndGet();
                m.release();
            }
        });
        AtomicInteger sent = new AtomicInteger();
        for (int i = 0; i < 5; i++) {
            peer.send(text("m" + i)).subscribe(null, e -> { }, sent::incrementAndGet);
        }
        // awaited first (a loaded machine may take long to deliver one), then given time to go wrong
        long deadline = System.nanoTime() + WAIT.toNanos();
        while ((got.get() < 1 || sent.get() < 1) && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        StepVerifier.create(Mono.delay(Duration.ofMillis(500))).expectNextCount(1).expectComplete().verify(WAIT);
        assertEquals(1, got.get(), "the subscriber asked for one message");
        assertEquals(1, sent.get(), "one receive posted, so the peer was granted one credit: one send completed");
    }

    // ------------------------------------------------------------------------------------------ 6
    /**
     * Defect 6: when ibv_post_recv refused a request in the middle of a chain, the whole batch was freed
     * although the requests before it were posted: a message landing in one of those was lost (its
     * completion named a freed entry). A full receive queue (ENOMEM) is not fatal: the refused buffers are
     * posted again later, and every message the peer sends is delivered, in order.
     */
    @Test
    void aPartlyRefusedReceivePostKeepsTheRequestsThatWerePostedAndLosesNoMessage() {
        bind(config());
        RdmaConnection client = connect(config().withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 4));
        RdmaConnection peer = serverSide(0);
        stack.faults().refuseNextPost(LoopbackFaults.Post.RECEIVE, clientId().queuePair(), 2, Errno.ENOMEM);
        List<String> got = new CopyOnWriteArrayList<>();
        client.receive().subscribe(new BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                request(4); // one chain of 4: 0 and 1 posted, 2 refused
            }

            @Override
            protected void hookOnNext(RdmaMessage m) {
                got.add(StandardCharsets.UTF_8.decode(m.data()).toString());
                m.release();
            }
        });
        for (int i = 0; i < 4; i++) {
            StepVerifier.create(peer.send(text("m" + i))).expectComplete().verify(WAIT);
        }
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.size() < 4 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(List.of("m0", "m1", "m2", "m3"), got);
        assertTrue(!client.isDisposed(), "a full receive queue does not close the connection");
    }

    private void awaitConnectionResourcesReleasedExceptServer() {
        server.disposeNow(WAIT);
        server = null;
        awaitConnectionResourcesReleased();
    }

    // ------------------------------------------------------------------------------------------ 9
    /**
     * Defect 9: asynchronous device events were never read: a connection whose QP the device declared
     * fatal waited for a timeout that may never come.
     */
    @Test
    void aFatalQueuePairEventClosesItsConnectionTyped() throws InterruptedException {
        bind(config());
        RdmaConnection client = connect(config());
        consumeAll(serverSide(0));
        stack.faults().raiseQpEvent(clientId().queuePair(), AsyncEventType.QP_FATAL);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        // The loopback also disconnects the peers of a QP in error (as rdma_cm may): the connection can be
        // closed before the event is read. The event must still become the connection's close cause.
        long deadline = System.nanoTime() + WAIT.toNanos();
        Throwable last = null;
        while (System.nanoTime() < deadline) {
            last = client.send(text("after QP_FATAL")).materialize().block(WAIT).getThrowable();
            if (last instanceof ConnectionClosedException && String.valueOf(last.getCause()).contains("QP_FATAL")) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("operations after the event never named QP_FATAL as the close cause: " + last
                + " / " + (last == null ? null : last.getCause()));
    }

    /** Defect 9: a CQ error event fails the CQ's connections as a dead poller does. */
    @Test
    void aCqErrorEventFailsTheConnectionsOnThatCq() {
        bind(config());
        RdmaConnection client = connect(config());
        consumeAll(serverSide(0));
        LoopbackCompletionQueue clientCq = stack.device("loopback0").completionQueues().get(0);
        stack.faults().raiseCqEvent(clientCq);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }
}
