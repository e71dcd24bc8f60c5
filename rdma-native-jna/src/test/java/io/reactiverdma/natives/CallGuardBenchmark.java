package io.reactiverdma.natives;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * What the call guard adds to every post and poll: {@code uncheckedMonitor} is the per-object monitor the
 * data path already takes; {@code ensureOpenThenMonitor} is the call before the guard (a volatile read);
 * {@code guardedMonitor} is the call now (one atomic add to enter, one to leave). Host only, no device:
 * {@code scripts/bench-native-call} runs the verbs benchmark; run this one with
 * {@code java -cp <test classpath> org.openjdk.jmh.Main CallGuardBenchmark} (see docs/native-bindings.md).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CallGuardBenchmark {
    /** A resource whose "native call" is a field update under a monitor, as QueuePair.postSend's. */
    public static final class Target extends NativeResource {
        private final Object lock = new Object();
        private long calls;

        Target() {
            super("benchmark", null);
        }

        long unchecked() {
            synchronized (lock) {
                return ++calls;
            }
        }

        long ensureOpenThen() {
            ensureOpen();
            synchronized (lock) {
                return ++calls;
            }
        }

        long guarded() {
            beginCall();
            try {
                synchronized (lock) {
                    return ++calls;
                }
            } finally {
                endCall();
            }
        }

        @Override
        protected void release() {
        }
    }

    private final Target target = new Target();

    @Benchmark
    public long uncheckedMonitor() {
        return target.unchecked();
    }

    @Benchmark
    public long ensureOpenThenMonitor() {
        return target.ensureOpenThen();
    }

    @Benchmark
    public long guardedMonitor() {
        return target.guarded();
    }
}
