package io.reactiverdma.verbs;

import com.sun.jna.Native;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * A Linux {@code eventfd} (non-blocking) that wakes a thread sleeping in
 * {@link CompletionChannel#awaitEvent(long, WakeupFd)}: another thread {@link #signal() signals} it when it
 * has work for the sleeper that no completion would announce. Signals coalesce. Not tied to a device.
 */
public final class WakeupFd extends NativeResource {
    private final int fd;
    /** One 8-byte counter for write, one for read (signal and drain run on different threads). */
    private final ByteBuffer writeWord = Buffers.allocate(8);
    private final ByteBuffer readWord = Buffers.allocate(8);
    /** Two struct pollfd for {@link Fds#awaitEitherReadable}; used by the one waiting thread. */
    final ByteBuffer pollFrame = Buffers.allocate(16);

    private WakeupFd(int fd) {
        super("eventfd " + fd, null);
        this.fd = fd;
        writeWord.putLong(0, 1L);
    }

    /** {@code eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)}. */
    public static WakeupFd create() {
        int fd = LibC.eventfd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        if (fd < 0) {
            throw new NativeCallException("eventfd", Native.getLastError());
        }
        return new WakeupFd(fd);
    }

    public int fd() {
        beginCall();
        try {
            return fd;
        } finally {
            endCall();
        }
    }

    /**
     * Makes the fd readable (adds 1 to the counter). Any thread; allocates nothing. Racing {@link #close()},
     * it either signals before the fd is closed or throws {@link io.reactiverdma.natives.ClosedResourceException}:
     * it never writes into a file that reused the closed fd's number (the call guard of {@link NativeResource}).
     */
    public void signal() {
        beginCall();
        try {
            write();
        } finally {
            endCall();
        }
    }

    private void write() {
        long rc = LibC.write(fd, Buffers.address(writeWord), 8);
        Reference.reachabilityFence(writeWord);
        if (rc < 0) {
            int errno = Native.getLastError();
            if (errno != Errno.EAGAIN) { // EAGAIN: the counter is saturated, so it is readable already
                throw new NativeCallException("write(eventfd)", errno, description());
            }
        }
    }

    /** Enters a call that uses {@link #fd} (a poll on it by another wrapper): pair with {@link #leave()}. */
    void enter() {
        beginCall();
    }

    void leave() {
        endCall();
    }

    /** The fd number, for a caller between {@link #enter()} and {@link #leave()}. */
    int fdInCall() {
        return fd;
    }

    /**
     * Waits at most {@code timeoutNs} until {@code otherFd} is readable or this wake-up is signalled (then
     * drained). True when {@code otherFd} is readable. For the one thread that sleeps on this wake-up.
     */
    public boolean awaitReadable(int otherFd, long timeoutNs) {
        beginCall();
        try {
            int ready = Fds.awaitEitherReadable(otherFd, fd, Math.max(0, timeoutNs), pollFrame, description());
            if ((ready & 2) != 0) {
                drainInCall();
            }
            return (ready & 1) != 0;
        } finally {
            endCall();
        }
    }

    /** Resets the counter; true when it had been signalled since the last drain. */
    public boolean drain() {
        beginCall();
        try {
            return drainInCall();
        } finally {
            endCall();
        }
    }

    /** {@link #drain()} for a caller between {@link #enter()} and {@link #leave()}. */
    boolean drainInCall() {
        long rc = LibC.read(fd, Buffers.address(readWord), 8);
        Reference.reachabilityFence(readWord);
        if (rc < 0) {
            int errno = Native.getLastError();
            if (errno == Errno.EAGAIN) {
                return false;
            }
            throw new NativeCallException("read(eventfd)", errno, description());
        }
        return true;
    }

    /** Wakes a thread waiting on this fd, so the close does not wait for its timeout. */
    @Override
    protected void onClosing() {
        write();
    }

    @Override
    protected void release() {
        LibC.close(fd);
    }
}
