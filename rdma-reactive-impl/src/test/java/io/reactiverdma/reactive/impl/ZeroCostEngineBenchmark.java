package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own CPU per message: the real engine, end to end, on the zero-cost loopback device
 * ({@link LoopbackStack#zeroCost()}), where a post completes inside {@code ibv_post_send} (the peer's receive
 * matched, one copy, the completions written into the CQ's preallocated ring; no lock, no wire thread, no
 * allocation per work request). One engine is both server and client with shared completion queues, so
 * both connection ends are on one poller thread: a {@code busySpin} run has two busy threads, the poller and
 * the benchmark thread, and measures the engine, not the scheduler (these machines have 2 cores). The server
 * consumes with {@code receive(decoder)} (the allocation-free receive path). Default options otherwise
 * (credit flow control, {@code MAX_INLINE_DATA} 64, so 64 B messages are inline, {@code SIGNAL_INTERVAL} 16).
 * <ul>
 *   <li>{@link #streamingSend}: {@value #STREAM} messages of {@value #MESSAGE_SIZE} B through one
 *       {@code send(Publisher)}, waited for together; per message, both sides (the sender's staging copy,
 *       chain building, post, the receiver's completion, decode, repost, credit return).</li>
 *   <li>{@link #pipelinedSends}: {@value #PIPELINE} {@code send(RegisteredBuffer)} Monos in flight
 *       ({@code flatMap}), waited for together ({@code block}); per message. {@link #pipelinedSendsSpinning}:
 *       the same, waited for by spinning (below), so without a thread wake-up per invocation;
 *       {@link #pipelinedMonos}: {@value #PIPELINE} Monos subscribed directly (no {@code flatMap}), waited for
 *       by spinning: the engine's own cost per pipelined Mono.</li>
 *   <li>{@link #sendWaited}: one {@code send(RegisteredBuffer)} Mono subscribed and waited for
 *       ({@code block}): the hand-off to the poller, post, completion, signal and the benchmark thread's
 *       wake-up (with {@code busySpin} nobody sleeps but {@code block}'s latch).</li>
 *   <li>{@link #sendWaitedSpinning}: the same, waited for as a latency-sensitive caller would, by a
 *       subscriber the benchmark thread spins on ({@link SpinningSubscriber}): no thread parks or wakes,
 *       so with {@code busySpin} this is the engine's round trip (hand-off, post, completion, signal).</li>
 *   <li>{@link #sendWaitedSplit}: the same as {@code sendWaited}, with the benchmark thread parked the way
 *       {@code block()} parks it, and the time split ({@link WaitSplit}): from subscribing to the poller's
 *       {@code onComplete}, and from there to the parked thread running again.</li>
 *   <li>{@link #write64}, {@link #read64}: one 64 B RDMA WRITE / READ Mono, waited for by spinning as in
 *       {@code sendWaitedSpinning} (with {@code block()} the row measured the thread wake-up, 13 us here, and
 *       varied from 5 to 15 us between quiet runs).</li>
 * </ul>
 * The poller's dispatch of one completion alone is {@code completion.CompletionDispatchBenchmark}.
 * With {@code -prof gc}, {@code gc.alloc.rate.norm} counts every thread of the JVM (benchmark thread,
 * poller, rdma_cm threads); the device itself allocates nothing per work request here.
 *
 * <p>Run: {@code scripts/bench-engine ZeroCostEngineBenchmark -f 1 -wi 3 -i 5} (gc profiler by default); where
 * the time goes: {@code scripts/bench-engine-cpu 'ZeroCostEngineBenchmark.streamingSend' -p idle=busySpin}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class ZeroCostEngineBenchmark {
    /** Every wait for an operation: a lost signal fails the run instead of hanging it. */
    static final Duration WAIT = Duration.ofSeconds(10);
    /** Bind, connect and close: a fork's first connection also loads and compiles the engine (slow on a loaded machine). */
    static final Duration SETUP_WAIT = Duration.ofSeconds(120);
    static final int MESSAGE_SIZE = 64;
    static final int PIPELINE = 64;
    static final int STREAM = 4096;

    /** The poller's {@link RdmaOption#IDLE_STRATEGY}: {@code busySpin} or the default {@code eventDriven}. */
    @Param({"busySpin", "eventDriven"})
    public String idle;

    private LoopbackStack stack;
    private DisposableRdmaServer server;
    private RdmaConnection client;
    private RegisteredBuffer registered;
    private RegisteredBuffer exposed;
    private RemoteRegion region;
    private Mono<Void> pipeline;
    private Mono<Void> stream;

    @Setup(Level.Trial)
    public void connect() {
        stack = LoopbackStack.zeroCost();
        RdmaEngine engine = new RdmaEngine(stack);
        PollerIdleStrategy strategy = switch (idle) {
            case "busySpin" -> PollerIdleStrategy.busySpin();
            case "eventDriven" -> PollerIdleStrategy.eventDriven();
            default -> throw new IllegalArgumentException("idle: " + idle);
        };
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.IDLE_STRATEGY, strategy);
        Sinks.One<RdmaConnection> accepted = Sinks.one();
        server = engine.bind(config, c -> {
            c.receive(RdmaMessage::length).subscribe(length -> { }, e -> { }); // 64: a cached Integer
            accepted.tryEmitValue(c);
            return c.onDispose();
        }).block(SETUP_WAIT);
        if (server == null) {
            throw new IllegalStateException("bind gave no server");
        }
        client = engine.connect(config.withPort(server.port())).block(SETUP_WAIT);
        RdmaConnection serverSide = accepted.asMono().block(SETUP_WAIT);
        if (client == null || serverSide == null) {
            throw new IllegalStateException("no connection");
        }
        registered = client.memory().allocate(MESSAGE_SIZE);
        ByteBuffer heap = ByteBuffer.allocate(MESSAGE_SIZE);
        for (int i = 0; i < MESSAGE_SIZE; i++) {
            registered.buffer().put(i, (byte) i);
            heap.put(i, (byte) i);
        }
        exposed = serverSide.memory().allocateRegistered(MESSAGE_SIZE, RemoteAccess.WRITE, RemoteAccess.READ);
        region = RemoteRegion.fromBytes(exposed.remoteRegion().toBytes());
        RdmaConnection c = client;
        RegisteredBuffer b = registered;
        pipeline = Flux.range(0, PIPELINE).flatMap(i -> c.send(b), PIPELINE).then();
        // The same heap buffer STREAM times, from an array: the upstream itself allocates nothing per message.
        ByteBuffer[] messages = new ByteBuffer[STREAM];
        java.util.Arrays.fill(messages, heap);
        stream = c.send(Flux.fromArray(messages));
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            if (registered != null) {
                registered.release();
            }
            if (exposed != null) {
                exposed.release();
            }
            if (client != null) {
                client.dispose();
                client.onDispose().block(SETUP_WAIT);
            }
            if (server != null) {
                server.disposeNow(SETUP_WAIT);
            }
        } finally {
            stack.close();
        }
    }

    /** {@value #STREAM} messages through one {@code send(Publisher)}: the score is per message. */
    @Benchmark
    @OperationsPerInvocation(STREAM)
    public void streamingSend() {
        stream.block(WAIT);
    }

    /** {@value #PIPELINE} sends per invocation: the score is per message. */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public void pipelinedSends() {
        pipeline.block(WAIT);
    }

    /**
     * {@value #PIPELINE} sends per invocation, waited for by spinning: {@link #pipelinedSends} without the
     * benchmark thread's one park and wake-up per invocation (about 20 us here, a third of a microsecond per
     * message). The score is per message.
     */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public void pipelinedSendsSpinning() {
        SpinningSubscriber s = new SpinningSubscriber();
        pipeline.subscribe(s);
        s.await(WAIT);
    }

    /**
     * {@value #PIPELINE} sends per invocation, each subscribed directly by a subscriber that counts down, waited
     * for by spinning: the engine's cost per pipelined Mono, without {@code flatMap}'s inner subscriber and
     * tracker (whose lock the benchmark thread's subscriptions and the poller's completions contend for) and
     * without a wake-up. The score is per message.
     */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public void pipelinedMonos() {
        CountDown countDown = new CountDown(PIPELINE);
        for (int i = 0; i < PIPELINE; i++) {
            client.send(registered).subscribe(new CountingSubscriber(countDown));
        }
        countDown.await(WAIT);
    }

    @Benchmark
    public void sendWaited() {
        client.send(registered).block(WAIT);
    }

    /** One send, waited for by spinning on its subscriber (no park, no wake-up). */
    @Benchmark
    public void sendWaitedSpinning() {
        SpinningSubscriber s = new SpinningSubscriber();
        client.send(registered).subscribe(s);
        s.await(WAIT);
    }

    /** One send, the benchmark thread parked until the poller's signal unparks it; the time split in two. */
    @Benchmark
    public void sendWaitedSplit(WaitSplit split) {
        ParkingSubscriber s = new ParkingSubscriber();
        long start = System.nanoTime();
        client.send(registered).subscribe(s);
        long woken = s.await(WAIT);
        split.add(s.signalled - start, woken - s.signalled);
    }

    /** Waited for by spinning, as {@link #sendWaitedSpinning}: with {@code block()} it measured a wake-up. */
    @Benchmark
    public void write64() {
        SpinningSubscriber s = new SpinningSubscriber();
        client.write(registered, region).subscribe(s);
        s.await(WAIT);
    }

    /** Waited for by spinning, as {@link #write64}. */
    @Benchmark
    public void read64() {
        SpinningSubscriber s = new SpinningSubscriber();
        client.read(registered, region).subscribe(s);
        s.await(WAIT);
    }

    /** A waiting thread's spin until {@link #finish} was called: no park, no wake-up. */
    abstract static class SpinWait {
        private volatile boolean done;
        private volatile Throwable error;

        /** Ends the wait, with {@code failure} when it is not null. */
        final void finish(@reactor.util.annotation.Nullable Throwable failure) {
            if (failure != null) {
                error = failure;
            }
            done = true;
        }

        /** What is still awaited, for the timeout's message. */
        abstract String awaited();

        final void await(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!done) {
                Thread.onSpinWait();
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(awaited() + " not within " + timeout);
                }
            }
            if (error != null) {
                throw new IllegalStateException(error);
            }
        }
    }

    /** A subscriber that requests everything and ignores values: what its terminal signal does is the class's. */
    interface RequestsAll extends reactor.core.CoreSubscriber<Object> {
        @Override
        default void onSubscribe(org.reactivestreams.Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        default void onNext(Object o) {
        }
    }

    /** A subscriber waited for by spinning: the poller's signal is seen without any thread waking. */
    static final class SpinningSubscriber extends SpinWait implements RequestsAll {
        @Override
        public void onError(Throwable t) {
            finish(t);
        }

        @Override
        public void onComplete() {
            finish(null);
        }

        @Override
        String awaited() {
            return "a signal";
        }
    }

    /**
     * Operations still to end; the last one ends the wait: the waiting thread spins on the wait's flag alone,
     * so it does not pull the counter's cache line from the poller at every count.
     */
    static final class CountDown extends SpinWait {
        private final java.util.concurrent.atomic.AtomicInteger remaining;
        @reactor.util.annotation.Nullable
        private volatile Throwable firstError;

        CountDown(int operations) {
            remaining = new java.util.concurrent.atomic.AtomicInteger(operations);
        }

        void ended(@reactor.util.annotation.Nullable Throwable failure) {
            if (failure != null && firstError == null) {
                firstError = failure;
            }
            if (remaining.decrementAndGet() == 0) {
                finish(firstError);
            }
        }

        @Override
        String awaited() {
            return remaining.get() + " operations' ends";
        }
    }

    /** One operation's subscriber (a subscriber per subscription: Reactive Streams rule 2.12), counting down. */
    static final class CountingSubscriber implements RequestsAll {
        private final CountDown countDown;

        CountingSubscriber(CountDown countDown) {
            this.countDown = countDown;
        }

        @Override
        public void onError(Throwable t) {
            countDown.ended(t);
        }

        @Override
        public void onComplete() {
            countDown.ended(null);
        }
    }

    /** A subscriber waited for as {@code block()} waits (park, unparked by the signal), noting when it came. */
    static final class ParkingSubscriber implements RequestsAll {
        private final Thread waiter = Thread.currentThread();
        private volatile boolean done;
        /** When the poller signalled (written before {@link #done}). */
        long signalled;
        private Throwable error;

        @Override
        public void onError(Throwable t) {
            error = t;
            signal();
        }

        @Override
        public void onComplete() {
            signal();
        }

        private void signal() {
            signalled = System.nanoTime();
            done = true;
            java.util.concurrent.locks.LockSupport.unpark(waiter);
        }

        /** Returns when the waiting thread ran again after the signal. */
        long await(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!done) {
                java.util.concurrent.locks.LockSupport.parkNanos(this, timeout.toNanos());
                if (System.nanoTime() - deadline > 0 && !done) {
                    throw new IllegalStateException("no signal within " + timeout);
                }
            }
            long woken = System.nanoTime();
            if (error != null) {
                throw new IllegalStateException(error);
            }
            return woken;
        }
    }

    /**
     * The split of {@link #sendWaitedSplit} (JMH secondary results, totals): {@code toSignalNanos /
     * waits} is the mean time from subscribing to the poller's signal, {@code toWakeNanos / waits} from the
     * signal to the parked benchmark thread running again.
     */
    @State(Scope.Thread)
    @org.openjdk.jmh.annotations.AuxCounters(org.openjdk.jmh.annotations.AuxCounters.Type.EVENTS)
    public static class WaitSplit {
        public long toSignalNanos;
        public long toWakeNanos;
        public long waits;

        @Setup(Level.Iteration)
        public void reset() {
            toSignalNanos = 0;
            toWakeNanos = 0;
            waits = 0;
        }

        void add(long signalNanos, long wakeNanos) {
            toSignalNanos += signalNanos;
            toWakeNanos += wakeNanos;
            waits++;
        }
    }
}
