package io.reactiverdma.verbs;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A completion event channel ({@code struct ibv_comp_channel}): a file descriptor that becomes readable when
 * a CQ armed with {@link CompletionQueue#requestNotify} gets a completion. {@link #getEvent} /
 * {@link #awaitEvent} return the CQ; acknowledge with {@link CompletionQueue#ackEvents(int)}, re-arm, then
 * poll. Closing it first closes the CQs attached to it (ibv_destroy_comp_channel fails with EBUSY while
 * any exists).
 */
public final class CompletionChannel extends NativeResource {
    private final VerbsContext context;
    private final long address;
    private final int fd;
    private final ConcurrentHashMap<Long, CompletionQueue> cqs = new ConcurrentHashMap<>();
    final Dependents attached = new Dependents(this);
    /** The wake-up of the thread waiting in {@link #awaitEvent(long, WakeupFd)}, if one is. */
    private volatile WakeupFd waitingWith;

    CompletionChannel(VerbsContext context, long address) {
        super("ibv_comp_channel on " + context.deviceName(), context);
        this.context = context;
        this.address = address;
        this.fd = new Pointer(address).getInt(IbvStructs.IbvCompChannel.FD_OFFSET);
    }

    public VerbsContext context() {
        return context;
    }

    /** The {@code struct ibv_comp_channel *}. */
    public long address() {
        return address;
    }

    /** The file descriptor; readable (POLLIN) when an event is pending. */
    public int fd() {
        beginCall();
        try {
            return fd;
        } finally {
            endCall();
        }
    }

    /** Makes {@link #getEvent()} return null instead of blocking when no event is pending (O_NONBLOCK). */
    public void setNonBlocking(boolean nonBlocking) {
        beginCall();
        try {
            Fds.setNonBlocking(fd, nonBlocking, description());
        } finally {
            endCall();
        }
    }

    void attach(CompletionQueue cq) {
        attached.add(cq); // first: refused once this channel began closing
        cqs.put(cq.address(), cq);
    }

    void detach(CompletionQueue cq) {
        cqs.remove(cq.address());
        attached.remove(cq);
    }

    /**
     * {@code ibv_get_cq_event}: waits for the next event and returns its CQ (which must be acknowledged
     * with {@link CompletionQueue#ackEvents(int)}). With {@link #setNonBlocking(boolean) O_NONBLOCK} set,
     * returns null when none is pending.
     */
    public CompletionQueue getEvent() {
        beginCall();
        try {
            return getEventInCall();
        } finally {
            endCall();
        }
    }

    private CompletionQueue getEventInCall() {
        ByteBuffer out = Buffers.allocate(16);
        long a = Buffers.address(out);
        int rc = LibIbverbs.ibv_get_cq_event(address, a, a + 8);
        if (rc != 0) {
            int errno = Native.getLastError();
            if (errno == Errno.EAGAIN) {
                return null;
            }
            throw new NativeCallException("ibv_get_cq_event", errno, description());
        }
        long cqAddress = out.getLong(0);
        Reference.reachabilityFence(out);
        CompletionQueue cq = cqs.get(cqAddress);
        if (cq == null) {
            // A CQ not created through this library (rare): acknowledge so nothing waits for it.
            LibIbverbs.ibv_ack_cq_events(cqAddress, 1);
            throw new IllegalStateException("completion event for an unknown CQ 0x" + Long.toHexString(cqAddress));
        }
        cq.eventReceived();
        return cq;
    }

    /**
     * Waits at most {@code timeout} (poll(2) on the fd) for an event; returns its CQ (to acknowledge), or
     * null when none arrived in time.
     */
    public CompletionQueue awaitEvent(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        beginCall();
        try {
            if (!Fds.awaitReadable(fd, timeout, description())) {
                return null;
            }
            return getEventInCall();
        } finally {
            endCall();
        }
    }

    /**
     * Waits at most {@code timeoutNs} for an event or for {@code wakeup} to be signalled (poll(2) on both
     * fds; the wake-up is drained). Returns the event's CQ (to acknowledge), or null when woken or timed
     * out. Allocates nothing when no event arrives; the poll argument frame is {@code wakeup}'s, so one
     * thread at a time waits with a given wake-up.
     */
    public CompletionQueue awaitEvent(long timeoutNs, WakeupFd wakeup) {
        Objects.requireNonNull(wakeup, "wakeup");
        beginCall();
        try {
            wakeup.enter();
            int ready;
            try {
                waitingWith = wakeup;
                ready = Fds.awaitEitherReadable(fd, wakeup.fdInCall(), Math.max(0, timeoutNs), wakeup.pollFrame,
                        description());
                waitingWith = null;
                if ((ready & 2) != 0) {
                    wakeup.drainInCall();
                }
            } finally {
                wakeup.leave();
            }
            return (ready & 1) != 0 ? getEventInCall() : null;
        } finally {
            endCall();
        }
    }

    /** A close from another thread wakes the waiter instead of waiting for its timeout. */
    @Override
    protected void onClosing() {
        WakeupFd w = waitingWith;
        if (w != null) {
            try {
                w.signal();
            } catch (io.reactiverdma.natives.ClosedResourceException closingToo) {
                // its own close woke the waiter
            }
        }
    }

    @Override
    protected void release() {
        attached.closeAll();
        Failures.check("ibv_destroy_comp_channel", LibIbverbs.ibv_destroy_comp_channel(address));
    }
}
