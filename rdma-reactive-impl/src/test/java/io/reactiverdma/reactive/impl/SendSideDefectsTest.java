package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackFaults;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.natives.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send side's defects of the engine review (issue 23: findings 6, 10, 11 and 16, and the "also noticed"
 * close re-entry), each through the public API on the loopback device. Loopback only: they need faults that
 * only the loopback device injects (refused posts at a chosen index, refused twice in a row) or a peer that
 * withholds credits at a scale a VM run would not add anything to.
 */
@Timeout(120)
class SendSideDefectsTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final LoopbackClientServer fixture = new LoopbackClientServer();
    private final LoopbackStack stack = fixture.stack;

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private RdmaTransportConfig config() {
        return LoopbackClientServer.config();
    }

    private RdmaConnection connect() {
        return fixture.connect(config());
    }

    private RdmaConnection serverSide(int index) {
        return fixture.serverSide(index);
    }

    private LoopbackCmId clientId() {
        return fixture.clientId();
    }

    private LoopbackQueuePair clientQp() {
        return clientId().queuePair();
    }

    private static ByteBuffer message(int i, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(0, i);
        return b;
    }

    private static List<Integer> collect(RdmaConnection c) {
        List<Integer> got = new CopyOnWriteArrayList<>();
        c.receive().subscribe(m -> {
            got.add(m.data().getInt(0));
            m.release();
        }, e -> { });
        return got;
    }

    private static Throwable failureOf(CompletableFuture<Void> f, long seconds) {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(seconds, TimeUnit.SECONDS));
        return e.getCause();
    }

    // ------------------------------------------------------------------------------------------ 6
    /**
     * Finding 6: {@code ibv_post_send} refuses a chain of eight at request 3 (ENOMEM: the send queue is
     * full), request 2 is unsignalled, and the zero-length WRITE that would end requests 0..2 is refused
     * too (nothing was polled in between). Nothing would ever complete 0..2, so the connection must close at
     * once, and the close's drain timeout ends them: typed, saying their outcome is unknown (the peer did get
     * them), never as "flushed".
     */
    @Test
    void aRefusedChainWhoseFenceIsRefusedTooClosesAndEndsThePostedPrefixAsAbandoned() throws Exception {
        RdmaConnection client = connect();
        List<Integer> got = collect(serverSide(0));
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);
        List<CompletableFuture<Void>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            results.add(new CompletableFuture<>());
        }
        LoopbackQueuePair qp = clientQp();
        client.send(message(-2, 8)).doOnSuccess(v -> {
            // Registered here (after -2 was posted): the chain of eight is refused at 3, the fence after it at 0.
            stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, qp, 3, Errno.ENOMEM);
            stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, qp, 0, Errno.ENOMEM);
            for (int i = 0; i < 8; i++) {
                CompletableFuture<Void> r = results.get(i);
                client.send(message(i, 8)).subscribe(null, r::completeExceptionally, () -> r.complete(null));
            }
        }).block(WAIT);

        for (int i = 3; i < 8; i++) {
            Throwable e = failureOf(results.get(i), 10);
            assertTrue(e.getMessage().contains("ibv_post_send refused work request 3 of a chain of 8"), e.toString());
        }
        // The close moves the QP to ERR at once. Each request of the prefix then ends one of three ways, all
        // true to what happened: executed before the ERR and proven so by a later flushed one's completion
        // (success), not executed and flushed ("was flushed"), or executed with nothing after it to prove it:
        // abandoned when the close's drain timeout (5 s) destroys the QP, "may have executed". Well within
        // 20 s; never before the fix.
        List<Integer> executed = new ArrayList<>(List.of(-1, -2));
        for (int i = 0; i < 3; i++) {
            Throwable e;
            try {
                results.get(i).get(20, TimeUnit.SECONDS);
                executed.add(i);
                continue;
            } catch (ExecutionException failed) {
                e = failed.getCause();
            }
            assertInstanceOf(ConnectionClosedException.class, e, "request " + i);
            if (e.getMessage().contains("abandoned with its queue pair")) {
                assertTrue(e.getMessage().contains("may have executed"), e.getMessage());
                executed.add(i);
            } else {
                assertTrue(e.getMessage().contains("was flushed"), e.getMessage());
            }
        }
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        assertEquals(executed, got, "the peer got exactly the requests that succeeded or were abandoned, once");
    }

    // ------------------------------------------------------------------------------ native finding 8
    /**
     * Native-layer finding 8: rxe queues a whole chain, then rings the doorbell and returns that write's error
     * without setting {@code bad_wr} (the loopback's refusal at index -1). "Not set" must count as "all
     * posted": each request then ends by what the device did with it (completed, flushed, or abandoned with
     * the QP, "may have executed"), never as "not posted" while the device still reads its buffer, and the
     * peer gets exactly the requests that succeeded or were abandoned. Before (bad_wr -1 mapped to 0) all
     * eight failed "were not posted" although the device executed them.
     */
    @Test
    void aRefusalWithoutBadWrCountsTheWholeChainAsPostedAndEndsEachByWhatTheDeviceDid() throws Exception {
        RdmaConnection client = connect();
        List<Integer> got = collect(serverSide(0));
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);
        List<CompletableFuture<Void>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            results.add(new CompletableFuture<>());
        }
        LoopbackQueuePair qp = clientQp();
        client.send(message(-2, 8)).doOnSuccess(v -> {
            stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, qp, -1, Errno.EIO);
            for (int i = 0; i < 8; i++) {
                CompletableFuture<Void> r = results.get(i);
                client.send(message(i, 8)).subscribe(null, r::completeExceptionally, () -> r.complete(null));
            }
        }).block(WAIT);

        List<Integer> executed = new ArrayList<>(List.of(-1, -2));
        for (int i = 0; i < 8; i++) {
            Throwable e;
            try {
                results.get(i).get(20, TimeUnit.SECONDS);
                executed.add(i);
                continue;
            } catch (ExecutionException failed) {
                e = failed.getCause();
            }
            assertFalse(e.getMessage().contains("not posted"), "request " + i + " was posted: " + e);
            assertInstanceOf(ConnectionClosedException.class, e, "request " + i);
            if (e.getMessage().contains("abandoned with its queue pair")) {
                assertTrue(e.getMessage().contains("may have executed"), e.getMessage());
                executed.add(i);
            } else {
                assertTrue(e.getMessage().contains("was flushed"), e.getMessage());
            }
        }
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        assertEquals(executed, got, "the peer got exactly the requests that succeeded or were abandoned, once");
    }

    // ----------------------------------------------------------------------------------------- 16
    /**
     * Finding 16: the chain 0, 1, 2 is refused at 1, and request 1's subscriber throws from onError (a raw
     * subscriber; Reactor's own lambdas drop such errors). Before the fix the exception left the flush half
     * done: request 2 was never signalled, the stale chain stayed built for the next flush, and the
     * connection stayed open.
     */
    @Test
    void aSubscriberThatThrowsWhileARefusedChainIsFailedLeavesNoHalfDoneFlush() throws Exception {
        RdmaConnection client = connect();
        List<Integer> got = collect(serverSide(0));
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);
        CompletableFuture<Void> first = new CompletableFuture<>();
        CompletableFuture<Void> third = new CompletableFuture<>();
        AtomicBoolean throwerCalled = new AtomicBoolean();
        LoopbackQueuePair qp = clientQp();
        client.send(message(-2, 8)).doOnSuccess(v -> {
            stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, qp, 1, Errno.EINVAL);
            client.send(message(0, 8)).subscribe(null, first::completeExceptionally, () -> first.complete(null));
            client.send(message(1, 8)).subscribe(new CoreSubscriber<Void>() {
                @Override
                public void onSubscribe(Subscription s) {
                }

                @Override
                public void onNext(Void unused) {
                }

                @Override
                public void onError(Throwable t) {
                    throwerCalled.set(true);
                    throw new IllegalStateException("a subscriber that throws from onError");
                }

                @Override
                public void onComplete() {
                }
            });
            client.send(message(2, 8)).subscribe(null, third::completeExceptionally, () -> third.complete(null));
        }).block(WAIT);

        first.get(10, TimeUnit.SECONDS);
        Throwable e = failureOf(third, 10);
        assertInstanceOf(RdmaException.class, e);
        assertTrue(e.getMessage().contains("ibv_post_send refused work request 1 of a chain of 3"), e.getMessage());
        assertTrue(throwerCalled.get());
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(serverSide(0).onDispose()).expectComplete().verify(WAIT);
        assertEquals(List.of(-1, -2, 0), got, "nothing stale was posted again");
    }

    /**
     * Finding 16, the other way in: a stream's upstream whose {@code request} throws (a broken publisher:
     * Reactive Streams rule 3.16) on the poller, while the flush asks streams for more. Before the fix every
     * flush of the connection threw there, so nothing else was ever posted on it.
     */
    @Test
    void aStreamWhoseUpstreamThrowsFromRequestFailsAloneAndOtherSendsGoOn() {
        RdmaConnection client = connect();
        List<Integer> got = collect(serverSide(0));
        Publisher<ByteBuffer> broken = s -> s.onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
                throw new IllegalStateException("request() of a broken publisher");
            }

            @Override
            public void cancel() {
            }
        });
        StepVerifier.create(client.send(broken))
                .expectErrorSatisfies(e -> assertTrue(String.valueOf(e.getMessage()).contains("request() of a broken"),
                        e.toString()))
                .verify(WAIT);
        StepVerifier.create(client.send(message(7, 8))).expectComplete().verify(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (got.isEmpty() && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait(); // the peer's receive() runs on its own poller: await its delivery
        }
        assertEquals(List.of(7), new ArrayList<>(got));
    }

    // ----------------------------------------------------------------------------------------- 11
    /**
     * Finding 11: the result of {@code send(Publisher)} is cancelled after the stream subscribed upstream
     * but before upstream called {@code onSubscribe}. Upstream must then be cancelled when its subscription
     * arrives, or a hot or endless publisher stays subscribed for good.
     */
    @Test
    void aStreamCancelledBeforeUpstreamsOnSubscribeCancelsUpstream() {
        RdmaConnection client = connect();
        serverSide(0).receive().subscribe(RdmaMessage::release, e -> { });
        AtomicReference<Subscriber<? super ByteBuffer>> subscriber = new AtomicReference<>();
        Publisher<ByteBuffer> late = subscriber::set; // calls onSubscribe only when the test says so
        Disposable result = client.send(late).subscribe();
        assertNotNull(subscriber.get(), "the stream subscribed upstream");
        result.dispose();
        AtomicBoolean upstreamCancelled = new AtomicBoolean();
        subscriber.get().onSubscribe(new Subscription() {
            @Override
            public void request(long n) {
            }

            @Override
            public void cancel() {
                upstreamCancelled.set(true);
            }
        });
        assertTrue(upstreamCancelled.get(), "upstream was not cancelled");
    }

    // ----------------------------------------------------------------------------------------- 10
    /**
     * Finding 10: 200,000 sends wait behind a peer that grants no credit; the newest 100,000 are cancelled
     * (as mass timeouts would), newest first. Each cancel runs on the poller that the device's other
     * connections share; removing from the middle of an array queue took a scan of the queue per cancel
     * (about 10^10 steps here, seconds to minutes), during which the other connection's WRITE waited. With
     * an O(1) cancel the WRITE completes in milliseconds; the bound of 3 s leaves an order of magnitude either
     * way on a loaded machine.
     */
    @Test
    void cancellingMassesOfQueuedSendsKeepsTheSharedPollerResponsive() {
        RdmaConnection blocked = connect();
        RdmaConnection peer = serverSide(0); // never subscribes to receive(): grants no credit
        RdmaConnection other = connect();
        RdmaConnection otherPeer = serverSide(1);
        assertTrue(blocked.creditFlowControl());
        RegisteredBuffer target = peer.memory().allocateRegistered(64, RemoteAccess.WRITE);
        RegisteredBuffer otherTarget = otherPeer.memory().allocateRegistered(64, RemoteAccess.WRITE);
        RemoteRegion region = target.remoteRegion();
        RemoteRegion otherRegion = otherTarget.remoteRegion();
        RegisteredBuffer source = blocked.memory().allocate(8);
        RegisteredBuffer otherSource = other.memory().allocate(8);
        // Both connections are served by one poller thread (SHARED completion queues, the default).
        AtomicReference<String> blockedThread = new AtomicReference<>();
        AtomicReference<String> otherThread = new AtomicReference<>();
        blocked.write(source, region).doOnSuccess(v -> blockedThread.set(Thread.currentThread().getName())).block(WAIT);
        other.write(otherSource, otherRegion).doOnSuccess(v -> otherThread.set(Thread.currentThread().getName()))
                .block(WAIT);
        assertEquals(blockedThread.get(), otherThread.get(), "the two connections share a poller");

        int n = 200_000;
        Disposable[] sends = new Disposable[n];
        for (int i = 0; i < n; i++) {
            sends[i] = blocked.send(source).subscribe(null, e -> { });
        }
        long t0 = System.nanoTime();
        for (int i = n - 1; i >= n / 2; i--) {
            sends[i].dispose();
        }
        other.write(otherSource, otherRegion).block(Duration.ofSeconds(100));
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 3_000, "the other connection's WRITE waited " + ms + " ms behind " + n / 2 + " cancels");
        blocked.dispose();
        StepVerifier.create(blocked.onDispose()).expectComplete().verify(Duration.ofSeconds(30));
        source.release();
        otherSource.release();
        target.release();
        otherTarget.release();
    }

    // ------------------------------------------------------------------------------- also noticed
    /**
     * The review's "also noticed": a close whose pre-close flush is refused re-entered {@code close()} through
     * the refusal, disconnected twice and armed a second drain watchdog that nothing cancelled (it kept the
     * connection reachable on the engine's timer until it fired). The close runs once: one rdma_disconnect.
     */
    @Test
    void aCloseWhosePreCloseFlushIsRefusedRunsOnce() throws Exception {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide(0);
        collect(srv);
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);
        CompletableFuture<Void> refused = new CompletableFuture<>();
        LoopbackCmId clientId = clientId();
        LoopbackQueuePair qp = clientId.queuePair();
        client.send(message(-2, 8)).doOnSuccess(v -> {
            stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, qp, 0, Errno.EINVAL);
            // Queued for this cycle's flush, then the close: the close posts it first, and the post is refused.
            client.send(message(0, 8)).subscribe(null, refused::completeExceptionally, () -> refused.complete(null));
            client.dispose();
        }).block(WAIT);
        Throwable e = failureOf(refused, 10);
        assertTrue(e.getMessage().contains("ibv_post_send refused"), e.toString());
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(srv.onDispose()).expectComplete().verify(WAIT);
        assertEquals(1, clientId.disconnectCalls(), "rdma_disconnect calls of one close");
    }
}
