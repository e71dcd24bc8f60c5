package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;

import java.nio.ByteBuffer;

/**
 * The data-path calls (post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq go through provider
 * function pointers) made through libffi directly: {@link Native#ffi_call(long, long, long, long)} with a
 * call interface prepared once ({@link Native#ffi_prep_cif}) and a per-object {@link Frame} of argument
 * slots in native memory. A call is then one JNI transition with four {@code long}s: no argument objects,
 * no conversion, no allocation. {@link Function#invokeInt(Object[])} does the same work with per-call
 * argument conversion and copying, several times slower (see {@code NativeCallCost}).
 *
 * <p>JNA exposes these two natives publicly (its own benchmarks use them). They are verified once, at class
 * initialisation, by calling libc's {@code labs} through the same machinery; if anything about them is off
 * (another JNA, another ABI), {@link #AVAILABLE} is false and {@link Downcalls} does not choose this path.
 * The data path uses it through {@link LibffiCall}; on JDK 22+ FFM downcalls are preferred.
 */
final class FfiCall {
    // libffi's type codes (ffi.h), stable across libffi versions.
    private static final short FFI_TYPE_SINT32 = 10;
    private static final short FFI_TYPE_SINT64 = 12;
    private static final short FFI_TYPE_POINTER = 14;
    /** ffi_type is { size_t size; unsigned short alignment; unsigned short type; ffi_type **elements; }. */
    private static final int FFI_TYPE_SIZE = 24;
    /** JNA passes this to libffi as the ABI; 0 selects the platform's default C convention in JNA's build. */
    private static final int DEFAULT_ABI = 0;

    private static final ByteBuffer TYPES = Buffers.allocate(1024);
    private static final long[] CIFS = new long[DataPathCall.Signature.values().length];
    static final boolean AVAILABLE;
    static final Throwable UNAVAILABLE_CAUSE;

    static {
        Throwable cause = null;
        boolean ok = false;
        try {
            long base = Buffers.address(TYPES);
            long sint32 = type(base, 0, 4, FFI_TYPE_SINT32);
            long sint64 = type(base, FFI_TYPE_SIZE, 8, FFI_TYPE_SINT64);
            long pointer = type(base, 2 * FFI_TYPE_SIZE, Native.POINTER_SIZE, FFI_TYPE_POINTER);
            int arrays = 4 * FFI_TYPE_SIZE;
            CIFS[DataPathCall.Signature.PTR_PTR_PTR.ordinal()] = cif(base, arrays, sint32, pointer, pointer, pointer);
            CIFS[DataPathCall.Signature.PTR_INT_PTR.ordinal()] = cif(base, arrays + 32, sint32, pointer, sint32, pointer);
            CIFS[DataPathCall.Signature.PTR_INT.ordinal()] = cif(base, arrays + 64, sint32, pointer, sint32);
            long labsCif = cif(base, arrays + 96, sint64, sint64);
            ok = selfTest(labsCif);
            if (!ok) {
                cause = new IllegalStateException("libc labs(-42) through Native.ffi_call did not return 42");
            }
        } catch (Throwable t) {
            cause = t;
        }
        AVAILABLE = ok;
        UNAVAILABLE_CAUSE = cause;
    }

    private FfiCall() {
    }

    private static long type(long base, int offset, int size, short code) {
        TYPES.putLong(offset, size);
        TYPES.putShort(offset + 8, (short) size);
        TYPES.putShort(offset + 10, code);
        TYPES.putLong(offset + 16, 0L);
        return base + offset;
    }

    private static long cif(long base, int arrayOffset, long returnType, long... argTypes) {
        for (int i = 0; i < argTypes.length; i++) {
            TYPES.putLong(arrayOffset + 8 * i, argTypes[i]);
        }
        long cif = Native.ffi_prep_cif(DEFAULT_ABI, argTypes.length, returnType, base + arrayOffset);
        if (cif == 0) {
            throw new IllegalStateException("ffi_prep_cif failed");
        }
        return cif;
    }

    private static boolean selfTest(long labsCif) {
        long fn = com.sun.jna.Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction("labs"));
        Frame f = new Frame(1);
        f.putLong(0, -42L);
        Native.ffi_call(labsCif, fn, f.resultAddress, f.avaluesAddress);
        return f.buffer.getLong(Frame.RESULT) == 42L;
    }

    static long cif(DataPathCall.Signature s) {
        return CIFS[s.ordinal()];
    }

    /**
     * Argument slots for one kind of call on one object, in native memory: values, the array of pointers
     * to them (libffi's {@code avalue}), and the return slot. Not thread-safe: guard it.
     */
    static final class Frame {
        static final int MAX_ARGS = 4;
        static final int RESULT = 2 * 8 * MAX_ARGS;

        final ByteBuffer buffer;
        final long resultAddress;
        final long avaluesAddress;

        Frame(int args) {
            if (args > MAX_ARGS) {
                throw new IllegalArgumentException("at most " + MAX_ARGS + " arguments");
            }
            buffer = Buffers.allocate(RESULT + 8);
            long base = Buffers.address(buffer);
            resultAddress = base + RESULT;
            avaluesAddress = base + 8 * MAX_ARGS;
            for (int i = 0; i < args; i++) {
                buffer.putLong(8 * MAX_ARGS + 8 * i, base + 8 * i);
            }
        }

        /** Sets a pointer (or 64-bit) argument. */
        void putLong(int arg, long value) {
            buffer.putLong(8 * arg, value);
        }

        /** Sets an int argument. */
        void putInt(int arg, int value) {
            buffer.putInt(8 * arg, value);
        }

        /** Calls {@code fn} with the current arguments; returns its int result (libffi widens it to a word). */
        int callInt(long cif, long fn) {
            Native.ffi_call(cif, fn, resultAddress, avaluesAddress);
            return (int) buffer.getLong(RESULT);
        }
    }
}
