package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How many messages a {@code send(Publisher)} keeps in flight does not depend on how large the peer's
 * receive buffers are: small messages to a peer with 1 MiB receive buffers (what RSocket over RDMA
 * configures for whole frames) are taken from upstream a send-queue's depth at a time, as they are for a
 * peer with 4 KiB buffers. Seen through RSocket's {@code requestChannel256} with whole frames: its frames waited
 * in RSocket's queue while the stream took four at a time (about 470 frames a second each way on a loaded
 * host), because the staging area had one slot as large as the peer's receive buffer per message in flight
 * and had to fit one pooled buffer (4 MiB): a window of 4 with 1 MiB buffers. Now each staged message takes
 * its own length in a staging ring, and messages larger than the stream expected (so that they do not fit
 * what is free) still go, whole and in order, and give their memory back. Loopback only: it counts upstream
 * requests and the client pool's bytes, which the device does not change.
 */
@Timeout(60)
class StreamingSendWindowHostTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int SEND_DEPTH = 128;

    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine serverEngine = new RdmaEngine(stack);
    private final RdmaEngine clientEngine = new RdmaEngine(stack);
    private final List<Disposable> toClose = new ArrayList<>();
    private final Sinks.One<RdmaConnection> accepted = Sinks.one();
    private DisposableRdmaServer server;

    @AfterEach
    void tearDown() {
        try {
            toClose.forEach(Disposable::dispose);
            if (server != null) {
                server.disposeNow(WAIT);
            }
        } finally {
            stack.close();
        }
    }

    @Test
    void aStreamOfSmallMessagesToAPeerWithOneMebibyteBuffersAsksUpstreamForTheSendQueuesDepth() {
        assertEquals(SEND_DEPTH, firstUpstreamRequest(1024 * 1024), "first request to upstream with 1 MiB peer buffers");
    }

    @Test
    void aStreamOfSmallMessagesToAPeerWithFourKibibyteBuffersAsksUpstreamForTheSendQueuesDepth() {
        assertEquals(SEND_DEPTH, firstUpstreamRequest(4096), "first request to upstream with 4 KiB peer buffers");
    }

    /**
     * Sizes the stream could not expect: small messages first (so that upstream is asked for many), then runs
     * of messages as large as the peer's buffers, which do not all fit the staging ring's free bytes, mixed
     * with small ones. Each arrives whole, in order, and every byte of staging goes back to the pool.
     */
    @Test
    void messagesLargerThanTheStreamExpectedArriveWholeInOrderAndGiveTheirStagingBack() throws Exception {
        int big = 1024 * 1024;
        RdmaConnection[] ends = connect(big);
        RdmaConnection client = ends[0];
        BufferPool pool = (BufferPool) client.memory();
        long inUseBefore = pool.pooledBytesInUse();
        int n = 300;
        int[] sizes = new int[n];
        for (int i = 0; i < n; i++) {
            sizes[i] = i < 100 ? 64 : i < 140 ? big : i % 3 == 0 ? big - 7 * i : 100 + i;
        }
        List<String> wrong = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> received = new CompletableFuture<>();
        int[] next = {0};
        toClose.add(ends[1].receive().take(n).subscribe(m -> {
            int i = next[0]++;
            ByteBuffer d = m.data();
            if (d.remaining() != sizes[i] || d.getInt(d.position()) != i || d.get(d.limit() - 1) != (byte) i) {
                wrong.add("message " + i + ": " + d.remaining() + " bytes, first int " + d.getInt(d.position()));
            }
            m.release();
        }, received::completeExceptionally, () -> received.complete(next[0])));

        StepVerifier.create(client.send(Flux.range(0, n).map(i -> message(i, sizes[i]))))
                .expectComplete()
                .verify(WAIT);

        assertEquals(n, received.get(WAIT.toSeconds(), TimeUnit.SECONDS), "messages received");
        assertEquals(List.of(), wrong, "messages received not as sent");
        awaitPoolInUse(pool, inUseBefore);
    }

    /**
     * A cancelled stream with messages staged and never posted (the peer gave no credits for them: it does
     * not receive) gives back its staging, also what messages larger than expected took from the pool.
     */
    @Test
    void aCancelledStreamGivesBackTheStagingOfMessagesItNeverPosted() throws Exception {
        int big = 1024 * 1024;
        RdmaConnection client = connect(big)[0];
        BufferPool pool = (BufferPool) client.memory();
        long inUseBefore = pool.pooledBytesInUse();
        AtomicInteger emitted = new AtomicInteger();
        Disposable stream = client.send(Flux.range(0, 200)
                        .map(i -> message(i, i < 8 ? 64 : big))
                        .doOnNext(m -> emitted.incrementAndGet()))
                .subscribe(null, e -> { });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (emitted.get() < 40 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertTrue(emitted.get() >= 40, "upstream emitted only " + emitted.get() + " messages");
        assertTrue(pool.pooledBytesInUse() > inUseBefore + 8L * big, "messages staged beyond the ring: "
                + (pool.pooledBytesInUse() - inUseBefore) + " bytes in use");
        // Only the stream ends: the connection keeps its own receive buffers (in the baseline), so a close here
        // would take those back too and the pool could pass below the baseline before it is read.
        stream.dispose();
        awaitPoolInUse(pool, inUseBefore);
    }

    private static ByteBuffer message(int i, int size) {
        ByteBuffer b = ByteBuffer.allocate(size);
        b.putInt(0, i);
        b.put(size - 1, (byte) i);
        return b;
    }

    private static void awaitPoolInUse(BufferPool pool, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (pool.pooledBytesInUse() != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(expected, pool.pooledBytesInUse(), "the client pool's bytes in use");
    }

    /** A client and the server's side of its connection, to a server with receive buffers of {@code bufferSize}. */
    private RdmaConnection[] connect(int bufferSize) {
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, bufferSize)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 16)
                .withOption(RdmaOption.SEND_QUEUE_DEPTH, SEND_DEPTH);
        server = serverEngine.bind(config, c -> {
            accepted.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        RdmaConnection client = clientEngine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        toClose.add(client);
        RdmaConnection srv = accepted.asMono().block(WAIT);
        assertNotNull(srv);
        return new RdmaConnection[] {client, srv};
    }

    /** Streams 1,000 messages of 64 bytes to a peer with receive buffers of {@code bufferSize}; the first request(n). */
    private long firstUpstreamRequest(int bufferSize) {
        RdmaConnection[] ends = connect(bufferSize);
        RdmaConnection client = ends[0];
        RdmaConnection srv = ends[1];
        int n = 1000;
        toClose.add(srv.receive().subscribe(RdmaMessage::release));
        ConcurrentLinkedQueue<Long> requests = new ConcurrentLinkedQueue<>();
        long started = System.nanoTime();
        StepVerifier.create(client.send(Flux.range(0, n)
                        .map(i -> ByteBuffer.allocate(64).putInt(0, i))
                        .doOnRequest(requests::add)))
                .expectComplete()
                .verify(WAIT);
        System.out.printf("%d-byte peer buffers: %d messages in %d ms, upstream asked %d times, first %d%n",
                bufferSize, n, (System.nanoTime() - started) / 1_000_000, requests.size(), requests.peek());
        Long first = requests.peek();
        assertNotNull(first, "upstream was never asked");
        return first;
    }
}
