package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.loopback.LoopbackFaults;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Doorbell batching, selective signalling, the streaming send path and the decoding receive, through the public API on the
 * loopback device, whose QPs count {@code ibv_post_send} calls and signalled completions.
 */
@Timeout(60)
class BatchingAndStreamingTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final LoopbackClientServer fixture = new LoopbackClientServer();
    private final LoopbackStack stack = fixture.stack;

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    private RdmaConnection connect() {
        return fixture.connect(LoopbackClientServer.config());
    }

    private RdmaConnection serverSide() {
        return fixture.serverSide(0);
    }

    private LoopbackQueuePair clientQp() {
        return fixture.clientId().queuePair();
    }

    /** Collects the int each message starts with. */
    private static List<Integer> collect(RdmaConnection c, int n, CompletableFuture<Void> done) {
        List<Integer> got = new CopyOnWriteArrayList<>();
        c.receive().take(n).subscribe(m -> {
            got.add(m.data().getInt(0));
            m.release();
        }, done::completeExceptionally, () -> done.complete(null));
        return got;
    }

    private static ByteBuffer message(int i, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(0, i);
        return b;
    }

    @Test
    void streamingSendPostsInChainsSignalsOneInNAndDeliversInOrder() throws Exception {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        int n = 4000;
        CompletableFuture<Void> done = new CompletableFuture<>();
        List<Integer> got = collect(srv, n, done);
        LoopbackQueuePair qp = clientQp();
        long postsBefore = qp.sendPostCalls();
        long signalledBefore = qp.signalledSendCompletions();
        long requestsBefore = qp.sendRequestsPosted();

        StepVerifier.create(client.send(Flux.range(0, n).map(i -> message(i, 64)))).expectComplete().verify(WAIT);
        done.get(10, TimeUnit.SECONDS);

        for (int i = 0; i < n; i++) {
            assertEquals(i, got.get(i), "message " + i + " out of order or lost");
        }
        long requests = qp.sendRequestsPosted() - requestsBefore;
        long posts = qp.sendPostCalls() - postsBefore;
        long signalled = qp.signalledSendCompletions() - signalledBefore;
        // n messages plus credit updates; one post per message (the old engine) would be >= n.
        assertTrue(requests >= n, "requests " + requests);
        assertTrue(posts <= n / 4, "doorbell batching: " + posts + " ibv_post_send calls for " + requests + " requests");
        assertTrue(signalled <= n / 4, "selective signalling: " + signalled + " completions for " + requests + " requests");
    }

    @Test
    void aRefusedChainFailsFromBadWrOnTypedAndNothingBeforeIt() throws Exception {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        CompletableFuture<Void> serverDone = new CompletableFuture<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        srv.receive().subscribe(m -> {
            got.add(m.data().getInt(0));
            m.release();
        }, serverDone::completeExceptionally, () -> serverDone.complete(null));
        // Credits must be there before the chain is built, or it would be posted in pieces.
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);

        stack.faults().refuseNextPost(LoopbackFaults.Post.SEND, clientQp(), 3, Errno.EINVAL);
        List<CompletableFuture<Void>> results = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            results.add(new CompletableFuture<>());
        }
        // The eight sends are subscribed on the poller thread inside one completion's callback, so one flush
        // at the end of that cycle posts them as one chain of eight.
        client.send(message(-2, 8)).doOnSuccess(v -> {
            for (int i = 0; i < 8; i++) {
                CompletableFuture<Void> r = results.get(i);
                client.send(message(i, 8)).subscribe(null, r::completeExceptionally, () -> r.complete(null));
            }
        }).block(WAIT);

        long t0 = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            results.get(i).get(10, TimeUnit.SECONDS); // posted before bad_wr: sent
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(ms < 2_000, "the requests before bad_wr waited " + ms + " ms (the close's drain timeout?)");
        for (int i = 3; i < 8; i++) {
            CompletableFuture<Void> r = results.get(i);
            Throwable e = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> r.get(10, TimeUnit.SECONDS)).getCause();
            assertInstanceOf(RdmaException.class, e);
            assertTrue(!(e instanceof ConnectionClosedException), "request " + i + ": " + e);
            assertTrue(e.getMessage().contains("ibv_post_send refused work request 3 of a chain of 8"), e.getMessage());
        }
        // The connection closes (a device that refuses an accounted-for post is not trusted with more).
        client.onDispose().block(WAIT);
        awaitEnd(serverDone);
        assertEquals(List.of(-1, -2, 0, 1, 2), got, "the peer got exactly the requests before bad_wr");
    }

    @Test
    void anUnsignalledFailureFailsItselfTheOnesBeforeSucceedAndTheRestFlush() throws Exception {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        CompletableFuture<Void> serverDone = new CompletableFuture<>();
        List<Integer> got = new CopyOnWriteArrayList<>();
        srv.receive().subscribe(m -> {
            got.add(m.data().getInt(0));
            m.release();
        }, serverDone::completeExceptionally, () -> serverDone.complete(null));
        RegisteredBuffer target = srv.memory().allocateRegistered(64, RemoteAccess.WRITE);
        RemoteRegion region = target.remoteRegion();
        RegisteredBuffer local = client.memory().allocate(8);
        BufferPool pool = (BufferPool) client.memory();
        StepVerifier.create(client.send(message(-1, 8))).expectComplete().verify(WAIT);

        stack.faults().failNextCompletion(clientQp(), WrOpcode.RDMA_WRITE, WcStatus.REM_ACCESS_ERR);
        List<CompletableFuture<Void>> results = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            results.add(new CompletableFuture<>());
        }
        // SEND, SEND, SEND, WRITE (fails), SEND, SEND, SEND: one chain, only its last request signalled.
        client.send(message(-2, 8)).doOnSuccess(v -> {
            for (int i = 0; i < 7; i++) {
                CompletableFuture<Void> r = results.get(i);
                Mono<Void> op = i == 3 ? client.write(local, region) : client.send(message(i, 200));
                op.subscribe(null, r::completeExceptionally, () -> r.complete(null));
            }
        }).block(WAIT);

        for (int i = 0; i < 3; i++) {
            results.get(i).get(10, TimeUnit.SECONDS);
        }
        Throwable writeError = causeOf(results.get(3));
        assertInstanceOf(RdmaCompletionException.class, writeError, "the failed request fails itself");
        for (int i = 4; i < 7; i++) {
            assertInstanceOf(ConnectionClosedException.class, causeOf(results.get(i)), "request " + i + " was flushed");
        }
        client.onDispose().block(WAIT);
        awaitEnd(serverDone);
        assertEquals(List.of(-1, -2, 0, 1, 2), got);
        // Every copy the sends made, and the closed connection's receive buffers, went back to the pool exactly
        // once (none is still held, none freed twice): only the test's own buffer is left.
        local.release();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (pool.pooledBytesInUse() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void aStreamRefusesAnOversizedMessageTypedAndStopsUpstream() {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        srv.receive().subscribe(RdmaMessage::release, e -> { });
        List<Long> requested = new CopyOnWriteArrayList<>();
        Flux<ByteBuffer> messages = Flux.range(0, 100)
                .map(i -> message(i, i == 10 ? 1 << 20 : 16))
                .doOnRequest(requested::add);
        StepVerifier.create(client.send(messages))
                .expectErrorSatisfies(e -> {
                    assertInstanceOf(InvalidRequestException.class, e);
                    assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                            ((InvalidRequestException) e).reason());
                })
                .verify(WAIT);
        // The connection is still usable.
        StepVerifier.create(client.send(message(1, 8))).expectComplete().verify(WAIT);
    }

    @Test
    void aStreamFailsTypedWhenTheConnectionCloses() {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        srv.receive().subscribe(RdmaMessage::release, e -> { });
        Sinks.Many<ByteBuffer> upstream = Sinks.many().unicast().onBackpressureBuffer();
        upstream.tryEmitNext(message(0, 8));
        StepVerifier.create(client.send(upstream.asFlux()))
                .then(client::dispose)
                .expectError(ConnectionClosedException.class)
                .verify(WAIT);
    }

    @Test
    void receiveWithADecoderLendsEachMessageOnceInOrderAndTakesItsBufferBack() {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        int n = 1000; // far more than the 64 receive buffers: they must come back without any release
        List<RdmaMessage> kept = new CopyOnWriteArrayList<>();
        Flux<Integer> decoded = srv.receive(m -> {
            kept.add(m);
            return m.data().getInt(0);
        });
        StepVerifier.create(decoded.take(n).collectList()
                        .zipWith(client.send(Flux.range(0, n).map(i -> message(i, 32))).then(Mono.just(true))))
                .assertNext(t -> {
                    for (int i = 0; i < n; i++) {
                        assertEquals(i, t.getT1().get(i));
                    }
                })
                .expectComplete()
                .verify(WAIT);
        // The lent message is one flyweight, and it is dead outside the decoder's call.
        InvalidRequestException e = org.junit.jupiter.api.Assertions.assertThrows(InvalidRequestException.class,
                () -> kept.get(0).data());
        assertEquals(InvalidRequestException.Reason.BUFFER_RELEASED, e.reason());
        assertTrue(kept.stream().distinct().count() == 1, "one flyweight for every message");
    }

    @Test
    void aDecoderThatThrowsFailsTheFluxAndTheNextSubscriberGetsTheRest() {
        RdmaConnection client = connect();
        RdmaConnection srv = serverSide();
        IllegalStateException boom = new IllegalStateException("bad message");
        StepVerifier.create(srv.receive(m -> {
                    if (m.data().getInt(0) == 2) {
                        throw boom;
                    }
                    return m.data().getInt(0);
                }))
                .then(() -> client.send(Flux.range(0, 5).map(i -> message(i, 8))).subscribe())
                .expectNext(0, 1)
                .expectErrorMatches(t -> t == boom)
                .verify(WAIT);
        StepVerifier.create(srv.receive(m -> m.data().getInt(0)).take(2))
                .expectNext(3, 4)
                .expectComplete()
                .verify(WAIT);
    }

    private static Throwable causeOf(CompletableFuture<Void> f) {
        try {
            f.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("succeeded");
    }

    /** The peer delivers on its own thread: what it got is known once its receive has ended (the close ends it). */
    private static void awaitEnd(CompletableFuture<Void> receiveEnded) throws Exception {
        try {
            receiveEnded.get(10, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException endedByTheClose) {
            // how the close ends the peer's receive is not what these tests are about
        }
    }
}
