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
 * pointers in {@code struct ibv_context_ops}; the bindings call each cached pointer through libffi with a
 * call interface prepared once ({@link FfiCall}, the default), or through a cached JNA {@link Function}
 * with a reused argument array (the fallback). {@code memcmp(a, b, 0)} stands in for the provider
 * function: three pointer-sized arguments like {@code post_send(qp, wr, bad_wr)}, returns an int at once,
 * so what is measured is the call mechanism itself.
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
        cif = FfiCall.cif(FfiCall.Signature.PTR_PTR_PTR);
        frame = new FfiCall.Frame(3);
        frame.putLong(0, Pointer.nativeValue(a));
        frame.putLong(1, Pointer.nativeValue(b));
        frame.putLong(2, 0L);
        Direct.memcmp(a, b, 0);
    }

    /** Cached function pointer through libffi with a prepared cif and native argument slots: the data path. */
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
