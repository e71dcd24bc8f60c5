package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.verbs.AsyncEvent;
import io.reactiverdma.verbs.DeviceAttributes;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.WakeupFd;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A device context opened by librdmacm; its async events are read through its async fd and an eventfd. */
final class JnaDevice implements Device {
    final VerbsContext context;
    private final DeviceAttributes attributes;
    private final Map<Long, JnaCompletionQueue> cqs = new ConcurrentHashMap<>();
    private final Map<Long, JnaSharedReceiveQueue> srqs = new ConcurrentHashMap<>();
    private volatile WakeupFd asyncWakeup;

    JnaDevice(VerbsContext context) {
        this.context = context;
        this.attributes = context.queryDevice();
    }

    @Override
    public long key() {
        return context.address();
    }

    @Override
    public String name() {
        return context.deviceName();
    }

    @Override
    public int maxCqe() {
        return attributes.maxCqe();
    }

    @Override
    public int maxQpRdAtom() {
        return attributes.maxQpRdAtom();
    }

    @Override
    public int maxSrqWr() {
        return attributes.maxSrqWr();
    }

    /** Knows {@code srq} by its address, so its async events name it. */
    JnaSharedReceiveQueue track(io.reactiverdma.verbs.SharedReceiveQueue srq) {
        long address = srq.address();
        JnaSharedReceiveQueue q = new JnaSharedReceiveQueue(srq, () -> srqs.remove(address));
        srqs.put(address, q);
        return q;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        return new JnaProtectionDomain(context.allocPd(), this);
    }

    @Override
    public int numCompVectors() {
        return Math.max(1, context.numCompVectors());
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries, boolean events, int pollBatch, int vector,
            String description) {
        JnaCompletionQueue q = new JnaCompletionQueue(context, entries, pollBatch, events, vector, () -> forget());
        cqs.put(q.cq().address(), q);
        return q;
    }

    private void forget() {
        cqs.values().removeIf(q -> q.cq().isClosed());
    }

    private WakeupFd asyncWakeup() {
        WakeupFd w = asyncWakeup;
        if (w == null) {
            synchronized (this) {
                w = asyncWakeup;
                if (w == null) {
                    w = WakeupFd.create();
                    asyncWakeup = w;
                }
            }
        }
        return w;
    }

    @Override
    public AsyncEventInfo awaitAsyncEvent(long timeoutNs) {
        if (!asyncWakeup().awaitReadable(context.asyncFd(), timeoutNs)) {
            return null;
        }
        // non-blocking: a poll that said "readable" may have been answered by another reader of the same
        // context already (rdma_cm shares one context per process); blocking here would swallow the next event
        AsyncEvent e = context.pollAsyncEvent();
        if (e == null) {
            return null;
        }
        try {
            int qpNum = e.queuePair() != null ? e.queuePair().qpNum() : -1;
            JnaCompletionQueue cq = e.completionQueue() != null ? cqs.get(e.completionQueue().address()) : null;
            JnaSharedReceiveQueue srq = e.sharedReceiveQueue() != null ? srqs.get(e.sharedReceiveQueue().address()) : null;
            return new AsyncEventInfo(e.type(), e.portNum(), qpNum, cq, srq);
        } finally {
            context.ackAsyncEvent(e);
        }
    }

    @Override
    public void wakeupAsyncEvents() {
        WakeupFd w = asyncWakeup;
        if (w == null) {
            return; // none yet: no reader waits on it
        }
        try {
            w.signal();
        } catch (io.reactiverdma.natives.ClosedResourceException stopped) {
            // the reader stopped on its own (its 1 s wait ran out) and closed it: nobody left to wake
        }
    }

    /** Closes the wake-up eventfd (one per device context would otherwise live as long as the JVM). */
    @Override
    public void asyncEventsStopped() {
        WakeupFd w;
        synchronized (this) {
            w = asyncWakeup;
            asyncWakeup = null;
        }
        if (w != null) {
            w.close();
        }
    }

    @Override
    public String toString() {
        return name();
    }
}
