package io.reactiverdma.natives;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

/** errno values the bindings name, and {@code strerror} text for any errno. */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ENETUNREACH = 101;
    public static final int ECONNRESET = 104;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EHOSTUNREACH = 113;

    private Errno() {
    }

    /** The C library's {@code strerror(errno)} text, or {@code "errno N"} when libc cannot be reached. */
    public static String describe(int errno) {
        try {
            Pointer p = LibC.strerror(errno);
            return p == null ? "errno " + errno : p.getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** The calling thread's errno as JNA saved it after the last native call. */
    public static int last() {
        return Native.getLastError();
    }

    static final class LibC {
        static {
            Native.register("c");
        }

        private LibC() {
        }

        static native Pointer strerror(int errnum);
    }
}
