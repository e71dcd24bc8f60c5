package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the engine allocates per message on the caller's thread, measured with the JVM's per-thread
 * allocation counter ({@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}, exact to the
 * byte, whatever the machine's load) over many messages after a warm-up. The measured loops allocate nothing
 * of their own (one subscriber and one message buffer for all), so what is counted is the engine's (and
 * Reactor's, where the engine uses it) allocation on the subscriber's or producer's thread.
 *
 * <p>Loopback only: the allocation on the caller's thread does not depend on the device (the engine's code
 * is the same on rxe), and on the loopback device the counts take seconds instead of minutes.
 */
class EngineAllocationHostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int WARM_UP = 5_000;
    private static final int MEASURED = 20_000;
    /** What a run may allocate once, whatever its length (far below one byte per message). */
    private static final long ONE_OFF = 4096;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final LoopbackClientServer peers = new LoopbackClientServer();

    @AfterEach
    void close() {
        peers.close();
    }

    /** A client whose server side decodes (and so gives back) every message; counts the messages received. */
    private RdmaConnection connectedClient(AtomicLong received) {
        RdmaConnection client = peers.connect(LoopbackClientServer.config());
        peers.serverSide(0).receive(RdmaMessage::length).subscribe(n -> received.incrementAndGet());
        return client;
    }

    /**
     * The aim of issue 20 for one pipelined {@code send} Mono is at most 96 B over all threads, of which
     * Reactor's {@code flatMap} takes about 56 B for its inner subscriber; what the engine itself makes per
     * {@code send(RegisteredBuffer)} subscribed is its {@code Mono} (24 B) and its operation (48 B): 72 B.
     * Before this test the hand-off to the poller added a queue node (24 B), the operation carried every
     * kind's fields, and the Mono every kind's arguments: 160 B per send; then the operation still carried
     * a send's length and immediate data (56 B, 80 B per send).
     */
    @Test
    void aSendMonoAllocatesAtMost72BytesOnItsSubscribersThread() {
        AtomicLong received = new AtomicLong();
        RdmaConnection client = connectedClient(received);
        RegisteredBuffer buffer = client.memory().allocate(64);
        try {
            CountingSubscriber done = new CountingSubscriber();
            subscribeSends(client, buffer, done, WARM_UP);
            awaitCount(done::completed, WARM_UP, done);
            long before = THREADS.getCurrentThreadAllocatedBytes();
            subscribeSends(client, buffer, done, MEASURED);
            long bytes = THREADS.getCurrentThreadAllocatedBytes() - before;
            awaitCount(done::completed, WARM_UP + MEASURED, done);
            awaitCount(received::get, WARM_UP + MEASURED, done);
            // One-off allocation of the run (a lock inflated, a class initialised) is allowed: 4 KB over all.
            double perSend = (double) bytes / MEASURED;
            System.out.println("[allocation] send(RegisteredBuffer): " + perSend + " B per Mono on the subscriber's thread");
            assertTrue(bytes <= 72L * MEASURED + ONE_OFF, "send(RegisteredBuffer) allocated " + perSend + " B per "
                    + "Mono on the subscriber's thread (" + bytes + " B for " + MEASURED + "); at most 72 B: its Mono "
                    + "and its operation");
        } finally {
            buffer.release();
        }
    }

    /**
     * A received message's {@code data()} is one read-only view: one {@code ByteBuffer} per call (about 48-64 B
     * with compressed references), sliced from a read-only view of its registration made once. Before, each call
     * made a slice and then a read-only copy of it: two buffers, for every message an application or RSocket reads.
     */
    @Test
    void aMessagesDataViewIsOneByteBuffer() {
        RdmaConnection client = peers.connect(LoopbackClientServer.config());
        RdmaConnection server = peers.serverSide(0);
        java.util.concurrent.CompletableFuture<RdmaMessage> first = server.receive().next().toFuture();
        client.send(ByteBuffer.wrap(new byte[] {1, 2, 3})).block(WAIT); // a receive is posted for the demand
        RdmaMessage m = reactor.core.publisher.Mono.fromFuture(first).block(WAIT);
        assertTrue(m != null && m.length() == 3, "a message of 3 bytes received");
        try {
            long sum = 0;
            for (int i = 0; i < WARM_UP; i++) {
                sum += m.data().remaining();
            }
            long before = THREADS.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < MEASURED; i++) {
                sum += m.data().remaining();
            }
            long bytes = THREADS.getCurrentThreadAllocatedBytes() - before;
            assertEquals(3L * (WARM_UP + MEASURED), sum);
            double perCall = (double) bytes / MEASURED;
            System.out.println("[allocation] RdmaMessage.data(): " + perCall + " B per call");
            assertTrue(bytes <= 64L * MEASURED + ONE_OFF, "data() allocated " + perCall + " B per call; at most 64 B:"
                    + " one read-only ByteBuffer");
            assertTrue(m.data().isReadOnly(), "the view is read-only");
            assertEquals(java.nio.ByteOrder.BIG_ENDIAN, m.data().order());
        } finally {
            m.release();
        }
    }

    private static void subscribeSends(RdmaConnection client, RegisteredBuffer buffer, CountingSubscriber done,
            int n) {
        for (int i = 0; i < n; i++) {
            client.send(buffer).subscribe(done);
        }
    }

    /**
     * {@code send(Publisher)} takes each message on the producer's thread (a copy into its staging ring) and
     * hands the stream to the poller: nothing of that may allocate per message. Before this test the hand-off
     * allocated a queue node each time the stream was handed over again (up to 24 B per message).
     */
    @Test
    void streamingSendAllocatesNothingPerMessageOnTheProducersThread() {
        AtomicLong received = new AtomicLong();
        RdmaConnection client = connectedClient(received);
        ProducerThreadPublisher messages = new ProducerThreadPublisher();
        CountingSubscriber done = new CountingSubscriber();
        client.send(messages).subscribe(done);
        ByteBuffer message = ByteBuffer.allocate(64);
        messages.emit(message, WARM_UP);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        messages.emit(message, MEASURED);
        long bytes = THREADS.getCurrentThreadAllocatedBytes() - before;
        messages.complete();
        System.out.println("[allocation] send(Publisher): " + bytes + " B on the producer's thread for " + MEASURED
                + " messages");
        awaitCount(done::completed, 1, done);
        // The stream completes when the peer's device has every message (its send completions); the peer's
        // subscriber sees the last ones on its own poller a little later, so wait for them, do not assume them.
        awaitCount(received::get, WARM_UP + MEASURED, done);
        assertTrue(bytes <= ONE_OFF, "send(Publisher) allocated " + bytes + " B on the producer's thread for "
                + MEASURED + " messages (" + (double) bytes / MEASURED + " B per message); the aim is 0");
    }

    private static void awaitCount(LongSupplier count, long expected, CountingSubscriber done) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (count.getAsLong() < expected) {
            assertNull(done.error.get(), "an operation failed");
            if (System.nanoTime() > deadline) {
                fail("only " + count.getAsLong() + " of " + expected + " in " + WAIT);
            }
            Thread.onSpinWait();
        }
        assertEquals(expected, count.getAsLong());
        assertNull(done.error.get(), "an operation failed");
    }

    /** One subscriber for every Mono: requests everything, counts completions, keeps the first error. */
    private static final class CountingSubscriber implements CoreSubscriber<Void> {
        final AtomicLong completed = new AtomicLong();
        final AtomicReference<Throwable> error = new AtomicReference<>();

        long completed() {
            return completed.get();
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            error.compareAndSet(null, t);
        }

        @Override
        public void onComplete() {
            completed.incrementAndGet();
        }
    }

    /** A publisher whose messages the test thread emits as demand allows (its loop allocates nothing). */
    private static final class ProducerThreadPublisher implements Publisher<ByteBuffer>, Subscription {
        private final AtomicLong demand = new AtomicLong();
        private volatile Subscriber<? super ByteBuffer> subscriber;
        private volatile boolean cancelled;

        @Override
        public void subscribe(Subscriber<? super ByteBuffer> s) {
            subscriber = s;
            s.onSubscribe(this);
        }

        @Override
        public void request(long n) {
            demand.addAndGet(n);
        }

        @Override
        public void cancel() {
            cancelled = true;
        }

        void emit(ByteBuffer message, int n) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            for (int i = 0; i < n; i++) {
                while (demand.get() == 0) {
                    if (cancelled || System.nanoTime() > deadline) { // no message built while it spins
                        fail("no demand for message " + i + (cancelled ? " (cancelled)" : " in " + WAIT));
                    }
                    Thread.onSpinWait();
                }
                demand.decrementAndGet();
                subscriber.onNext(message);
            }
        }

        void complete() {
            subscriber.onComplete();
        }
    }
}
