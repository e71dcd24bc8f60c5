package io.reactiverdma.verbs;

import com.sun.jna.Native;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;

import java.nio.ByteBuffer;

/** Turns the three failure conventions of libibverbs into {@link NativeCallException}. */
final class Failures {
    private Failures() {
    }

    /**
     * For calls that return 0 on success and an errno on failure (positive, as the man pages say; some
     * providers return it negated, and a few return -1 with errno set: all three are handled).
     */
    static void check(String call, int rc) {
        if (rc != 0) {
            throw returned(call, rc, null);
        }
    }

    static NativeCallException returned(String call, int rc, String detail) {
        return returned(call, rc, detail, true);
    }

    /**
     * As {@link #returned(String, int, String)}; {@code errnoCaptured} is false for a call made through a
     * libffi frame ({@link FfiCall}), after which errno is not saved: a -1 then reports errno 0 ("no errno
     * reported") instead of the errno of an earlier call on this thread.
     */
    static NativeCallException returned(String call, int rc, String detail, boolean errnoCaptured) {
        if (rc == -1 && !errnoCaptured) {
            return new NativeCallException(call, 0, (detail == null ? "" : detail + "; ")
                    + "returned -1, errno not captured on the libffi call path");
        }
        int errno;
        if (rc > 0) {
            errno = rc;
        } else if (rc == -1) {
            errno = Native.getLastError();
            if (errno == 0) {
                errno = 1; // EPERM is what -1 means when errno was not set
            }
        } else {
            errno = -rc;
        }
        return new NativeCallException(call, errno, detail);
    }

    /** For calls that return a pointer, NULL on failure with errno set. Read errno right after the call. */
    static long checkPointer(String call, long result) {
        if (result == 0) {
            throw new NativeCallException(call, Native.getLastError());
        }
        return result;
    }

    /** For calls that return NULL on failure: the exception with errno read now, and a detail. */
    static NativeCallException nullResult(String call, String detail) {
        return new NativeCallException(call, Native.getLastError(), detail);
    }

    /**
     * The usual cause of ENOMEM from {@code ibv_reg_mr}: pinned pages are charged against RLIMIT_MEMLOCK.
     * Names the current soft and hard limits.
     */
    static String memlockHint() {
        return "the usual cause is the locked-memory limit (ulimit -l, RLIMIT_MEMLOCK), currently "
                + memlockLimits() + "; registered memory is pinned and counts against it: raise it "
                + "(ulimit -l unlimited, 'memlock' in /etc/security/limits.conf, LimitMEMLOCK= for a systemd "
                + "service, --ulimit memlock=-1 for docker) or register less";
    }

    /** "soft S, hard H" with values in KiB (as ulimit -l prints them) or "unlimited". */
    static String memlockLimits() {
        try {
            ByteBuffer rlimit = Buffers.allocate(Rlimit.SIZE);
            int rc = LibC.getrlimit(LibC.RLIMIT_MEMLOCK, Buffers.address(rlimit));
            if (rc != 0) {
                return "unknown (getrlimit failed: " + Errno.describe(Native.getLastError()) + ")";
            }
            String s = "soft " + kib(rlimit.getLong(Rlimit.RLIM_CUR_OFFSET)) + ", hard "
                    + kib(rlimit.getLong(Rlimit.RLIM_MAX_OFFSET));
            java.lang.ref.Reference.reachabilityFence(rlimit);
            return s;
        } catch (Throwable t) {
            return "unknown (" + t + ")";
        }
    }

    /** {@code struct rlimit}. */
    @io.reactiverdma.natives.NativeStruct(value = "struct rlimit", header = "sys/resource.h")
    static final class Rlimit {
        static final int SIZE = 16;
        @io.reactiverdma.natives.NativeField("rlim_cur")
        static final int RLIM_CUR_OFFSET = 0;
        @io.reactiverdma.natives.NativeField("rlim_max")
        static final int RLIM_MAX_OFFSET = 8;

        private Rlimit() {
        }
    }

    private static String kib(long bytes) {
        return bytes == -1L ? "unlimited" : Long.toUnsignedString(bytes / 1024) + " KiB";
    }
}
