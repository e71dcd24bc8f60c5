package io.reactiverdma.verbs;

import com.sun.jna.Native;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.time.Duration;

/** poll(2) and O_NONBLOCK on the file descriptors of completion channels and async events. */
final class Fds {
    private Fds() {
    }

    /** {@code struct pollfd}, as poll(2) takes an array of them. */
    @io.reactiverdma.natives.NativeStruct(value = "struct pollfd", header = "poll.h")
    static final class PollFd {
        static final int SIZE = 8;
        @io.reactiverdma.natives.NativeField("fd")
        static final int FD_OFFSET = 0;
        @io.reactiverdma.natives.NativeField("events")
        static final int EVENTS_OFFSET = 4;
        @io.reactiverdma.natives.NativeField("revents")
        static final int REVENTS_OFFSET = 6;

        private PollFd() {
        }
    }

    /** Waits until {@code fd} is readable or the timeout passes (EINTR retried); true when readable. */
    static boolean awaitReadable(int fd, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        ByteBuffer pfd = Buffers.allocate(PollFd.SIZE);
        long a = Buffers.address(pfd);
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                int ms = left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
                pfd.putInt(PollFd.FD_OFFSET, fd);
                pfd.putShort(PollFd.EVENTS_OFFSET, LibC.POLLIN);
                pfd.putShort(PollFd.REVENTS_OFFSET, (short) 0);
                int rc = LibC.poll(a, 1, ms);
                if (rc > 0) {
                    return true;
                }
                if (rc == 0) {
                    if (System.nanoTime() - deadline >= 0) {
                        return false;
                    }
                    continue;
                }
                int errno = Native.getLastError();
                if (errno != Errno.EINTR) {
                    throw new NativeCallException("poll", errno, what);
                }
            }
        } finally {
            Reference.reachabilityFence(pfd);
        }
    }

    /**
     * Waits until {@code fd} or {@code otherFd} is readable or the timeout passes (EINTR retried). Returns a
     * bit set: 1 when {@code fd} is readable, 2 when {@code otherFd} is; 0 on timeout.
     */
    static int awaitEitherReadable(int fd, int otherFd, long timeoutNs, ByteBuffer pfds, String what) {
        long deadline = System.nanoTime() + timeoutNs;
        long a = Buffers.address(pfds);
        while (true) {
            long left = deadline - System.nanoTime();
            int ms = left <= 0 ? 0 : (int) Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000);
            pfds.putInt(PollFd.FD_OFFSET, fd);
            pfds.putShort(PollFd.EVENTS_OFFSET, LibC.POLLIN);
            pfds.putShort(PollFd.REVENTS_OFFSET, (short) 0);
            pfds.putInt(PollFd.SIZE + PollFd.FD_OFFSET, otherFd);
            pfds.putShort(PollFd.SIZE + PollFd.EVENTS_OFFSET, LibC.POLLIN);
            pfds.putShort(PollFd.SIZE + PollFd.REVENTS_OFFSET, (short) 0);
            int rc = LibC.poll(a, 2, ms);
            Reference.reachabilityFence(pfds);
            if (rc > 0) {
                short first = pfds.getShort(PollFd.REVENTS_OFFSET);
                short second = pfds.getShort(PollFd.SIZE + PollFd.REVENTS_OFFSET);
                if (((first | second) & LibC.POLLNVAL) != 0) {
                    // not "readable": a read would hit whatever file reuses the number next
                    throw new NativeCallException("poll", Errno.EBADF, what + " (fd " + ((first & LibC.POLLNVAL) != 0 ? fd
                            : otherFd) + " is not open)");
                }
                return (first != 0 ? 1 : 0) | (second != 0 ? 2 : 0);
            }
            if (rc == 0) {
                if (System.nanoTime() - deadline >= 0) {
                    return 0;
                }
                continue;
            }
            int errno = Native.getLastError();
            if (errno != Errno.EINTR) {
                throw new NativeCallException("poll", errno, what);
            }
        }
    }

    static void setNonBlocking(int fd, boolean nonBlocking, String what) {
        int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
        if (flags < 0) {
            throw new NativeCallException("fcntl(F_GETFL)", Native.getLastError(), what);
        }
        int updated = nonBlocking ? flags | LibC.O_NONBLOCK : flags & ~LibC.O_NONBLOCK;
        if (updated != flags && LibC.fcntl(fd, LibC.F_SETFL, updated) < 0) {
            throw new NativeCallException("fcntl(F_SETFL)", Native.getLastError(), what);
        }
    }
}
