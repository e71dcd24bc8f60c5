package io.reactiverdma.reactive.impl.completion;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PollerIdleStrategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The poller's cost of dispatching one completion: {@link CompletionPoller#onCompletion} (what
 * {@code ibv_poll_cq}'s loop calls per work completion) looks the {@code wr_id} up in the pending table and
 * calls the entry's {@link CompletionTarget}. {@value #BATCH} entries are taken once; each invocation
 * dispatches a completion for every one of them, in the table's slot order as a CQ would return them, to a
 * target that only counts (so the entries stay in use): the dispatch alone, without the connection's own
 * handling of the completion (that is in {@code ZeroCostEngineBenchmark}'s per-message numbers). Called on
 * the benchmark thread, as the poller thread would (the poller is not started).
 *
 * <p>Run: {@code scripts/bench-engine completion.CompletionDispatchBenchmark -f 1 -wi 3 -i 5}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CompletionDispatchBenchmark {
    static final int BATCH = 1024;

    private CompletionPoller poller;
    private final long[] wrIds = new long[BATCH];
    private long dispatched;

    private final CompletionTarget counting = new CompletionTarget() {
        @Override
        public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm,
                int wcFlags) {
            dispatched += byteLen;
        }
    };

    @Setup(Level.Trial)
    public void setUp() {
        PendingOperations pending = new PendingOperations(BATCH);
        poller = new CompletionPoller("dispatch-bench", new ScriptedCompletionSource(false), pending,
                PollerIdleStrategy.busySpin(),
                io.reactiverdma.reactive.impl.metrics.EngineMetricsHostTest.into(new SimpleMeterRegistry()));
        for (int i = 0; i < BATCH; i++) {
            wrIds[i] = pending.acquire(counting, OperationType.SEND, null, -1, 0).wrId();
        }
    }

    /** {@value #BATCH} completions per invocation: the score is per completion. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long dispatch() {
        for (int i = 0; i < BATCH; i++) {
            poller.onCompletion(7, wrIds[i], 0, 0, 0, 64, 0, 0);
        }
        return dispatched;
    }
}
