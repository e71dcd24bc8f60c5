package io.reactiverdma.verbs;

import com.sun.jna.Native;

/** The few libc functions the verbs wrappers need (direct mapping, pointers as addresses). */
final class LibC {
    static {
        Native.register(LibC.class, "c");
    }

    static final short POLLIN = 0x001;
    /** revents: the fd is not open (closed under the poll, or never was). */
    static final short POLLNVAL = 0x020;
    static final int F_GETFL = 3;
    static final int F_SETFL = 4;
    static final int O_NONBLOCK = 04000;
    static final int RLIMIT_MEMLOCK = 8;
    static final int EFD_NONBLOCK = 04000;
    static final int EFD_CLOEXEC = 02000000;

    private LibC() {
    }

    /** {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}. */
    static native int poll(long fds, long nfds, int timeoutMillis);

    /** {@code int fcntl(int fd, int cmd, int arg)} (the int-argument form). */
    static native int fcntl(int fd, int cmd, int arg);

    /** {@code int getrlimit(int resource, struct rlimit *rlim)}. */
    static native int getrlimit(int resource, long rlimit);

    /** {@code int eventfd(unsigned int initval, int flags)}. */
    static native int eventfd(int initval, int flags);

    /** {@code ssize_t read(int fd, void *buf, size_t count)}. */
    static native long read(int fd, long buf, long count);

    /** {@code ssize_t write(int fd, const void *buf, size_t count)}. */
    static native long write(int fd, long buf, long count);

    /** {@code int close(int fd)}: used by the tests to check that errno survives a direct-mapped call. */
    static native int close(int fd);
}
