package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.test.LoopbackRdma;
import io.rsocket.frame.FrameHeaderCodec;
import io.rsocket.frame.FrameType;
import io.rsocket.frame.PayloadFrameCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the transport itself allocates per frame, apart from the engine and RSocket, and the reference
 * counting of the received frames it recycles.
 *
 * <p>The counts run the transport over {@link InMemoryConnection}, an {@link RdmaConnection} that delivers
 * and takes messages synchronously on the test thread without allocating, so the test thread's allocation
 * ({@code com.sun.management.ThreadMXBean}, exact to the byte) is the transport's own. (Measured over the
 * real engine on the loopback device instead, the engine's receiving thread varies by some 50 B per message
 * from run to run with its batches, more than the bound here.) The retained-frame test runs on the real
 * engine on the loopback device; loopback only, because the reference counting does not depend on the
 * device and on the loopback device it takes seconds.
 */
class RdmaTransportAllocationHostTest {
    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int WARM_UP = 20_000;
    private static final int MEASURED = 100_000;
    /**
     * What a measured run of {@value #MEASURED} frames may allocate once, whatever its length (a class
     * initialised, a queue's chunk): 8 KB, under 0.1 B per frame; a frame's smallest object is 16 B.
     */
    private static final long ONE_OFF = 8192;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
    private final List<RdmaConnection> clients = new ArrayList<>();
    private DisposableRdmaServer server;

    @BeforeEach
    void bind() {
        server = RdmaServer.create().host(rdma.host()).port(0).handle(c -> {
            accepted.add(c);
            return c.onDispose();
        }).bind().block(WAIT);
        assertNotNull(server, "bound");
    }

    @AfterEach
    void close() {
        clients.forEach(RdmaConnection::dispose);
        if (server != null) {
            server.disposeNow(WAIT);
        }
    }

    /**
     * Before the recycled frame, each received frame was a new {@code CompositeByteBuf} (with its component
     * array and component) over a new {@code Unpooled.wrappedBuffer} of the message's view (a read-only
     * Netty buffer and a duplicate of the view): 303 B per frame measured over the engine, about a quarter
     * of RSocket's 1.0-1.3 kB per frame in {@code RSocketTransportBenchmark}.
     */
    @Test
    void receivingAFrameAllocatesNothingInTheTransport() {
        InMemoryConnection rdma = new InMemoryConnection(payloadFrame(64), WARM_UP + MEASURED);
        RdmaDuplexConnection connection = new RdmaDuplexConnection(rdma.connection(), ByteBufAllocator.DEFAULT);
        Counting<ByteBuf> receiver = new Counting<>(f -> FrameHeaderCodec.frameType(f));
        connection.receive().subscribe(receiver); // delivers every message inside subscribe, on this thread
        assertNull(receiver.error.get(), "receive failed");
        assertEquals(WARM_UP + MEASURED, receiver.count.get(), "frames received");
        assertEquals(WARM_UP + MEASURED, rdma.released.get(), "messages released");
        long bytes = receiver.measuredBytes;
        assertTrue(bytes <= ONE_OFF, "the transport allocated " + bytes + " B receiving " + MEASURED
                + " frames (" + (double) bytes / MEASURED + " B per frame)");
        connection.dispose();
    }

    /**
     * Sending: {@code sendFrame} queues into RSocket's own queue, and the frames go to the connection's
     * streaming send from there: a frame of one buffer as a view of it, a composite frame (as RSocket encodes
     * a payload) through one reused scratch buffer. Nothing is made per frame either way, RSocket's queue
     * included (measured: about 2-4 kB per run of 100,000 frames, the first chunks and the scratch buffer).
     */
    @Test
    void sendingAFrameAllocatesNothingInTheTransport() {
        ByteBuf whole = Unpooled.unreleasableBuffer(Unpooled.directBuffer(80).writeZero(80));
        ByteBuf header = Unpooled.directBuffer(16).writeZero(16);
        ByteBuf body = Unpooled.directBuffer(64).writeZero(64);
        CompositeByteBuf composite = Unpooled.compositeBuffer(2).addComponents(true, header, body);
        for (ByteBuf frame : List.of(whole, composite)) {
            InMemoryConnection rdma = new InMemoryConnection(payloadFrame(64), WARM_UP + MEASURED);
            RdmaDuplexConnection connection = new RdmaDuplexConnection(rdma.connection(), ByteBufAllocator.DEFAULT);
            long start = 0;
            for (int i = 0; i < WARM_UP + MEASURED; i++) {
                if (i == WARM_UP) {
                    start = THREADS.getCurrentThreadAllocatedBytes();
                }
                connection.sendFrame(1, frame == composite ? composite.retain() : frame);
            }
            long bytes = THREADS.getCurrentThreadAllocatedBytes() - start;
            assertEquals(WARM_UP + MEASURED, rdma.sent.get(), "frames sent");
            assertEquals(frame.readableBytes(), rdma.lastLength, "the last frame's length");
            assertTrue(bytes <= ONE_OFF, "sending " + MEASURED + " frames ("
                    + (frame == composite ? "composite" : "one buffer") + ") allocated " + bytes + " B ("
                    + (double) bytes / MEASURED + " B per frame)");
            connection.dispose();
        }
        assertEquals(1, composite.refCnt(), "the transport released each composite frame once");
        composite.release();
    }

    /**
     * A recycled frame must not be handed out again while anyone holds it: a frame the application retained
     * past RSocket's {@code onNext} keeps its bytes (and its receive buffer) while later frames arrive, then a
     * release frees it, and a second release is an {@link IllegalReferenceCountException}, not a decrement of
     * whatever frame the object carries next.
     */
    @Test
    void aRetainedFrameKeepsItsBytesWhileLaterFramesArriveAndASecondReleaseThrows() throws Exception {
        RdmaConnection peer = connectAndAccept();
        RdmaDuplexConnection connection = new RdmaDuplexConnection(peer, ByteBufAllocator.DEFAULT);
        AtomicReference<ByteBuf> kept = new AtomicReference<>();
        AtomicLong seen = new AtomicLong();
        AtomicLong mismatched = new AtomicLong();
        Counting<ByteBuf> receiver = new Counting<>(f -> {
            if (kept.get() == null) {
                kept.set(f.retain());
            } else if (f.getByte(f.writerIndex() - 1) != (byte) 2) {
                mismatched.incrementAndGet();
            }
            seen.incrementAndGet();
        });
        connection.receive().subscribe(receiver);
        ByteBuf first = Unpooled.copiedBuffer(payloadFrame(64));
        first.setByte(first.writerIndex() - 1, 1);
        ByteBuf later = Unpooled.copiedBuffer(payloadFrame(64));
        later.setByte(later.writerIndex() - 1, 2);
        int laterFrames = 1_000;
        List<ByteBuffer> frames = new ArrayList<>(Collections.nCopies(laterFrames, later.nioBuffer()));
        frames.add(0, first.nioBuffer());
        clients.get(clients.size() - 1).send(Flux.fromIterable(frames)).block(WAIT);
        awaitCount(seen, laterFrames + 1, receiver);

        ByteBuf frame = kept.get();
        assertEquals(0, mismatched.get(), "a later frame read another frame's bytes");
        assertEquals(1, frame.refCnt(), "the retained frame's reference count");
        assertEquals((byte) 1, frame.getByte(frame.writerIndex() - 1), "the retained frame's last byte");
        assertEquals(FrameType.NEXT, FrameHeaderCodec.frameType(frame));
        assertTrue(frame.release(), "the last release frees the frame");
        assertThrows(IllegalReferenceCountException.class, frame::release);
        assertThrows(IllegalReferenceCountException.class, () -> frame.getByte(0));
        connection.dispose();
    }

    /** A new client connection; returns the server's side of it. */
    private RdmaConnection connectAndAccept() throws InterruptedException {
        RdmaConnection client = RdmaClient.create().host(rdma.host()).port(server.port()).connect().block(WAIT);
        assertNotNull(client, "connected");
        clients.add(client);
        RdmaConnection serverSide = accepted.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(serverSide, "accepted");
        return serverSide;
    }

    private static void awaitCount(AtomicLong count, long expected, Counting<?> receiver) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (count.get() < expected && System.nanoTime() - deadline < 0) {
            assertNull(receiver.error.get(), "receive failed");
            Thread.onSpinWait();
        }
        assertNull(receiver.error.get(), "receive failed");
        assertEquals(expected, count.get(), "frames received");
    }

    /** A PAYLOAD frame (NEXT, stream 1) with {@code size} bytes of data, as one message's bytes. */
    private static ByteBuffer payloadFrame(int size) {
        ByteBuf data = Unpooled.buffer(size).writeZero(size);
        ByteBuf frame = PayloadFrameCodec.encode(ByteBufAllocator.DEFAULT, 1, false, false, true, null, data);
        try {
            ByteBuffer bytes = ByteBuffer.allocateDirect(frame.readableBytes());
            frame.getBytes(frame.readerIndex(), bytes);
            return bytes.flip();
        } finally {
            frame.release();
        }
    }

    /**
     * Unbounded demand; counts what arrives and measures its own thread's allocation from the
     * {@value #WARM_UP}th item to the last ({@code onNext} runs where the engine delivers: the receiving
     * thread, which does the transport's work too).
     */
    private static final class Counting<T> implements CoreSubscriber<T> {
        private final Consumer<T> action;
        final AtomicLong count = new AtomicLong();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        private long startBytes;
        volatile long measuredBytes = -1;

        Counting(Consumer<T> action) {
            this.action = action;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(T item) {
            action.accept(item);
            long n = count.incrementAndGet();
            if (n == WARM_UP) {
                startBytes = THREADS.getCurrentThreadAllocatedBytes();
            } else if (n == WARM_UP + MEASURED) {
                measuredBytes = THREADS.getCurrentThreadAllocatedBytes() - startBytes;
            }
        }

        @Override
        public void onError(Throwable t) {
            error.set(t);
        }

        @Override
        public void onComplete() {
        }
    }
}
