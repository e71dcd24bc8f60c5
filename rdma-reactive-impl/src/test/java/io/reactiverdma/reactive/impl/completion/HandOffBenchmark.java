package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.PollerIdleStrategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The cost of the owner-thread model's hand-off: another thread gives a task to a connection's poller
 * ({@link CompletionPoller#execute}), the poller runs it. Measured against a real poller thread on an empty
 * scripted CQ, with the busy-spin and event-driven idle strategies:
 * <ul>
 *   <li>{@code roundTrip}: hand a task over and wait until the poller ran it (one operation's extra latency
 *       when the submitting thread waits for nothing else);</li>
 *   <li>{@code oneWay}: hand tasks over without waiting, at most {@code WINDOW} outstanding (the throughput
 *       cost per operation of a producer that keeps the poller busy);</li>
 *   <li>{@code inline}: {@link CompletionPoller#run} on the poller thread itself, which runs the task at once
 *       (what an operation subscribed from a callback pays).</li>
 * </ul>
 * Run: {@code scripts/bench-engine completion.HandOffBenchmark -f 1 -wi 3 -i 5}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HandOffBenchmark {
    static final int WINDOW = 1024;

    @Param({"busySpin", "eventDriven"})
    public String idle;

    private CompletionPoller poller;
    private ScriptedCompletionSource cq;
    private volatile long ran;
    private long handed;
    private final Runnable task = () -> ran++;
    private final Runnable inlineProbe = this::inlineBatch;

    @Setup(Level.Trial)
    public void start() {
        cq = new ScriptedCompletionSource(idle.equals("eventDriven"));
        PollerIdleStrategy s = idle.equals("busySpin") ? PollerIdleStrategy.busySpin() : PollerIdleStrategy.eventDriven();
        poller = new CompletionPoller("hand-off-bench", cq, new PendingOperations(16), s,
                io.reactiverdma.reactive.impl.metrics.EngineMetricsHostTest.into(new SimpleMeterRegistry()));
        poller.start();
    }

    @TearDown(Level.Trial)
    public void stop() {
        poller.stop();
    }

    @Benchmark
    public long roundTrip() {
        long target = ++handed;
        poller.execute(task);
        while (ran < target) {
            Thread.onSpinWait();
        }
        return target;
    }

    @Benchmark
    public long oneWay() {
        long target = ++handed;
        while (target - ran > WINDOW) {
            Thread.onSpinWait();
        }
        poller.execute(task);
        return target;
    }

    /** 1000 inline runs on the poller thread per invocation: divide the score by 1000. */
    @Benchmark
    @org.openjdk.jmh.annotations.OperationsPerInvocation(1000)
    public long inline() {
        long target = handed += 1000;
        poller.execute(inlineProbe);
        while (ran < target) {
            Thread.onSpinWait();
        }
        return target;
    }

    private void inlineBatch() {
        for (int i = 0; i < 1000; i++) {
            poller.run(task);
        }
    }
}
