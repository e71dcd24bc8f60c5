package io.reactiverdma.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A {@link DataPathCall} as an FFM downcall (JDK 22+; compiled into the jar's {@code META-INF/versions/22}
 * and loaded by name by {@link Downcalls}, so Java 17 never sees it). The handles are static constants that
 * take the function's address as their first argument, so one handle per shape serves every provider and
 * the JIT inlines the call. Pointers travel as {@code long}s: on the 64-bit Linux ABIs this runs on
 * (x86-64 SysV, AArch64) a pointer and a 64-bit integer go in the same register, and no
 * {@code MemorySegment} is made per call. Stateless: safe from any thread.
 */
abstract class FfmCall extends DataPathCall {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final FunctionDescriptor PTR_PTR_PTR = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final FunctionDescriptor PTR_INT_PTR = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG);
    private static final FunctionDescriptor PTR_INT = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT);

    final MemorySegment function;
    final long self;

    private FfmCall(Signature signature, long function, long self) {
        super(signature);
        this.function = MemorySegment.ofAddress(function);
        this.self = self;
    }

    /**
     * The binder, for {@link Downcalls}.
     *
     * @throws IllegalStateException when native access is not enabled for this class's module (a restricted
     *                               method would then only warn now and fail in a later JDK)
     */
    static DataPathCall.Binder binder() {
        Module module = FfmCall.class.getModule();
        if (!module.isNativeAccessEnabled()) {
            throw new IllegalStateException("native access is not enabled for " + module
                    + ": start the JVM with --enable-native-access=" + (module.isNamed() ? module.getName() : "ALL-UNNAMED"));
        }
        return (signature, function, self, critical) -> critical ? new Critical(signature, function, self)
                : new Plain(signature, function, self);
    }

    /** A downcall with the usual thread-state transition (a safepoint may happen while it runs). */
    static final class Plain extends FfmCall {
        private static final MethodHandle H3P = LINKER.downcallHandle(PTR_PTR_PTR);
        private static final MethodHandle HIP = LINKER.downcallHandle(PTR_INT_PTR);
        private static final MethodHandle HI = LINKER.downcallHandle(PTR_INT);

        Plain(Signature signature, long function, long self) {
            super(signature, function, self);
        }

        @Override
        int call(long a, long b) {
            if (signature != Signature.PTR_PTR_PTR) {
                return super.call(a, b);
            }
            try {
                return (int) H3P.invokeExact(function, self, a, b);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        int call(int n, long p) {
            if (signature != Signature.PTR_INT_PTR) {
                return super.call(n, p);
            }
            try {
                return (int) HIP.invokeExact(function, self, n, p);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        int call(int n) {
            if (signature != Signature.PTR_INT) {
                return super.call(n);
            }
            try {
                return (int) HI.invokeExact(function, self, n);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /**
     * {@link Linker.Option#critical(boolean) critical}: no thread-state transition, so no safepoint until
     * it returns. Legal only for functions that are short and never call back into Java; only the
     * benchmarks use it (rxe's post_send is a system call).
     */
    static final class Critical extends FfmCall {
        private static final MethodHandle H3P = LINKER.downcallHandle(PTR_PTR_PTR, Linker.Option.critical(false));
        private static final MethodHandle HIP = LINKER.downcallHandle(PTR_INT_PTR, Linker.Option.critical(false));
        private static final MethodHandle HI = LINKER.downcallHandle(PTR_INT, Linker.Option.critical(false));

        Critical(Signature signature, long function, long self) {
            super(signature, function, self);
        }

        @Override
        int call(long a, long b) {
            if (signature != Signature.PTR_PTR_PTR) {
                return super.call(a, b);
            }
            try {
                return (int) H3P.invokeExact(function, self, a, b);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        int call(int n, long p) {
            if (signature != Signature.PTR_INT_PTR) {
                return super.call(n, p);
            }
            try {
                return (int) HIP.invokeExact(function, self, n, p);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }

        @Override
        int call(int n) {
            if (signature != Signature.PTR_INT) {
                return super.call(n);
            }
            try {
                return (int) HI.invokeExact(function, self, n);
            } catch (Throwable t) {
                throw rethrow(t);
            }
        }
    }

    /** A downcall throws nothing checked; anything else is a JVM error passed on as it is. */
    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException("downcall failed", t);
    }
}
