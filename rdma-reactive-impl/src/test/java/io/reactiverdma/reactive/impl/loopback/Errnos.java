package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.natives.NativeCallException;

/** The errnos the loopback device reports (Linux values), and the exception the real stack throws with them. */
final class Errnos {
    static final int EBADF = 9;
    static final int ENOMEM = 12;
    static final int EBUSY = 16;
    static final int EINVAL = 22;
    static final int EOPNOTSUPP = 95;
    static final int ECONNRESET = 104;
    static final int EADDRINUSE = 98;
    static final int EADDRNOTAVAIL = 99;
    static final int ETIMEDOUT = 110;
    static final int ENETUNREACH = 101;

    private Errnos() {
    }

    /** What a failed rdma_cm or verbs call throws on the real stack: names the call and carries the errno. */
    static NativeCallException fail(String call, int errno, String detail) {
        return new NativeCallException(call, errno, detail);
    }

    /** Throws any throwable unchecked (fault injection may inject checked ones). */
    @SuppressWarnings("unchecked")
    static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
