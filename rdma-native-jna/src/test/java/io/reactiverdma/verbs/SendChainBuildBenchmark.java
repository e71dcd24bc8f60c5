package io.reactiverdma.verbs;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What building one send work request costs the engine's poller (issue 20): a chain of {@value #CHAIN}
 * inline 64 B SENDs with one SGE each, as the streaming path builds it per flush ({@code add}, {@code sge},
 * the last one signalled, {@code clear}); nothing is posted. One thread, no device, no native call, so the
 * ratio between two builds holds on a loaded machine better than an end-to-end run. Per work request.
 *
 * <p>Run: {@code scripts/bench-native-call SendChainBuildBenchmark -f 1 -wi 3 -i 5 -w 1 -r 1}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SendChainBuildBenchmark {
    static final int CHAIN = 16;
    private final SendWorkRequests chain = new SendWorkRequests(CHAIN + 1, 1);
    private long wrId;

    @Benchmark
    @OperationsPerInvocation(CHAIN)
    public int inlineSends() {
        for (int k = 0; k < CHAIN; k++) {
            int i = chain.add(wrId++, WrOpcode.SEND, SendFlags.INLINE);
            chain.sge(i, 0x10000L + 64L * k, 64, 0x1234);
        }
        chain.addSendFlags(CHAIN - 1, SendFlags.SIGNALED);
        int n = chain.count();
        chain.clear();
        return n;
    }
}
