package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/** An rdma_cm event channel: a queue of events for the ids made from it, and a wake-up. */
public final class LoopbackCmChannel implements CmChannel {
    private final LoopbackStack stack;
    private final ArrayDeque<CmEventInfo> events = new ArrayDeque<>();
    private boolean wakeup;
    private volatile boolean closed;

    LoopbackCmChannel(LoopbackStack stack) {
        this.stack = stack;
        stack.resources.add(LoopbackResources.Kind.CM_CHANNEL, this, toString());
    }

    @Override
    public CmId createId(PortSpace portSpace) {
        if (closed) {
            throw Errnos.fail("rdma_create_id", Errnos.EBADF, "the event channel was destroyed");
        }
        if (portSpace != PortSpace.TCP && portSpace != PortSpace.UDP) {
            throw Errnos.fail("rdma_create_id", Errnos.EINVAL, "the loopback supports RDMA_PS_TCP and RDMA_PS_UDP only, not "
                    + portSpace);
        }
        return new LoopbackCmId(stack, this, null, portSpace == PortSpace.UDP);
    }

    /** Queues an event (dropped when the channel was destroyed). */
    void enqueue(CmEventInfo e) {
        synchronized (this) {
            if (closed) {
                return;
            }
            events.add(e);
            notifyAll();
        }
    }

    @Override
    public CmEventInfo nextEvent() {
        if (closed) {
            throw Errnos.fail("rdma_get_cm_event", Errnos.EBADF, "the event channel was destroyed");
        }
        synchronized (this) {
            return events.poll();
        }
    }

    @Override
    public void await(long timeoutNs) {
        if (closed) {
            throw Errnos.fail("rdma_get_cm_event", Errnos.EBADF, "the event channel was destroyed");
        }
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        synchronized (this) {
            while (events.isEmpty() && !wakeup && !closed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
            wakeup = false;
        }
    }

    @Override
    public void wakeup() {
        synchronized (this) {
            wakeup = true;
            notifyAll();
        }
    }

    /** Events queued and not read yet. */
    public synchronized int pendingEvents() {
        return events.size();
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            events.clear();
            notifyAll();
        }
        stack.resources.remove(LoopbackResources.Kind.CM_CHANNEL, this);
    }

    public boolean isClosed() {
        return closed;
    }

    @Override
    public String toString() {
        return "cm-channel#" + Integer.toHexString(System.identityHashCode(this));
    }
}
