package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * Host cost of the calling mechanisms the verbs bindings use, measured through libc so it runs on any
 * machine. {@code ibv_post_send}/{@code ibv_poll_cq} are static inlines that call through function
 * pointers in {@code struct ibv_context_ops}; the bindings call each cached pointer as an FFM downcall on
 * JDK 22+ ({@code FfmCall}), through libffi with a call interface prepared once ({@link LibffiCall}) before,
 * or through a cached JNA {@link Function} with a reused argument array (the last fallback).
 * {@code memcmp(a, b, 0)} stands in for the provider function: three pointer-sized arguments like
 * {@code post_send(qp, wr, bad_wr)}, returns an int at once, so what is measured is the call mechanism
 * itself. The FFM benchmarks need JDK 22+ (and {@code --enable-native-access}); {@code ffmCritical} uses
 * {@code Linker.Option.critical}, legal for such a short call that never calls back into Java.
 *
 * <p>Run: {@code scripts/bench-native-call} (or see docs/native-bindings.md).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class FunctionPointerCallBenchmark {
    private Function memcmpPointer;
    private Object[] args;
    private Pointer a;
    private Pointer b;
    private long memcmpAddress;
    private long cif;
    private FfiCall.Frame frame;
    private DataPathCall libffi;

    /** JNA direct mapping of an exported symbol: the mechanism for every non-inline verb. */
    static final class Direct {
        static {
            Native.register(NativeLibrary.getInstance("c"));
        }

        static native int memcmp(Pointer a, Pointer b, long n);

        private Direct() {
        }
    }

    @Setup
    public void setup() {
        a = new Memory(16);
        b = new Memory(16);
        // The address as a provider's ops table would hold it, turned back into a callable Function.
        Pointer address = NativeLibrary.getInstance("c").getGlobalVariableAddress("memcmp");
        memcmpPointer = Function.getFunction(address);
        args = new Object[] {a, b, 0L};
        memcmpAddress = Pointer.nativeValue(address);
        if (!FfiCall.AVAILABLE) {
            throw new IllegalStateException("libffi path unavailable", FfiCall.UNAVAILABLE_CAUSE);
        }
        cif = FfiCall.cif(DataPathCall.Signature.PTR_PTR_PTR);
        libffi = LibffiCall.BINDER.bind(DataPathCall.Signature.PTR_PTR_PTR, memcmpAddress, Pointer.nativeValue(a), false);
        frame = new FfiCall.Frame(3);
        frame.putLong(0, Pointer.nativeValue(a));
        frame.putLong(1, Pointer.nativeValue(b));
        frame.putLong(2, 0L);
        Direct.memcmp(a, b, 0);
    }

    /** The FFM downcalls of the data path on JDK 22+, plain and critical, bound as a QP binds them. */
    @State(Scope.Thread)
    public static class FfmCalls {
        DataPathCall plain;
        DataPathCall critical;
        long b;

        @Setup
        public void setup(FunctionPointerCallBenchmark outer) {
            if (Downcalls.FFM == null) {
                throw new IllegalStateException("FFM unavailable: " + Downcalls.FFM_UNAVAILABLE);
            }
            plain = Downcalls.FFM.bind(DataPathCall.Signature.PTR_PTR_PTR, outer.memcmpAddress, Pointer.nativeValue(outer.a), false);
            critical = Downcalls.FFM.bind(DataPathCall.Signature.PTR_PTR_PTR, outer.memcmpAddress, Pointer.nativeValue(outer.a), true);
            b = Pointer.nativeValue(outer.b);
        }
    }

    /** Cached function pointer as an FFM downcall: the data path on JDK 22+. */
    @Benchmark
    public int ffm(FfmCalls ffm) {
        return ffm.plain.call(ffm.b, 0L);
    }

    /** The same with {@code Linker.Option.critical(false)}: no thread-state transition. */
    @Benchmark
    public int ffmCritical(FfmCalls ffm) {
        return ffm.critical.call(ffm.b, 0L);
    }

    /** Cached function pointer through libffi as the data path calls it ({@link LibffiCall}): JDK 17-21. */
    @Benchmark
    public int libffi() {
        return libffi.call(Pointer.nativeValue(b), 0L);
    }

    /** The bare libffi call with a prepared cif and native argument slots, without the call object. */
    @Benchmark
    public long functionPointerPreparedFfiCall() {
        Native.ffi_call(cif, memcmpAddress, frame.resultAddress, frame.avaluesAddress);
        return frame.buffer.getLong(FfiCall.Frame.RESULT);
    }

    /** Cached function pointer as a JNA Function, reused Object[] arguments: the data path's fallback. */
    @Benchmark
    public int functionPointerReusedArgs() {
        return memcmpPointer.invokeInt(args);
    }

    /** Cached function pointer with a fresh argument array each call, for comparison. */
    @Benchmark
    public int functionPointerFreshArgs() {
        return memcmpPointer.invokeInt(new Object[] {a, b, 0L});
    }

    /** JNA direct mapping ({@code Native.register}) of the same function. */
    @Benchmark
    public int directMapping() {
        return Direct.memcmp(a, b, 0);
    }
}
