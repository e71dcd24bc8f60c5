package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;

import java.net.InetAddress;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A loopback device: its protection domains, completion queues and asynchronous event queue. It can be made
 * to "hang" ({@link LoopbackFaults#hang}): then its QPs execute and flush nothing and no completion reaches
 * its CQs until it is resumed.
 */
public final class LoopbackDevice implements Device {
    final LoopbackStack stack;
    private final String name;
    private final long key;
    private final List<InetAddress> addresses;
    private final int maxCqe;
    private final int maxQpRdAtom;
    final LoopbackResources resources;
    final Set<LoopbackCompletionQueue> cqs = ConcurrentHashMap.newKeySet();
    /** Every CQ ever created on this device, in creation order (for tests that pick one). */
    private final java.util.List<LoopbackCompletionQueue> created = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final ArrayDeque<AsyncEventInfo> asyncEvents = new ArrayDeque<>();
    private boolean asyncWakeup;
    volatile boolean hung;

    LoopbackDevice(LoopbackStack stack, String name, long key, List<InetAddress> addresses, int maxCqe,
            int maxQpRdAtom) {
        this.stack = stack;
        this.name = name;
        this.key = key;
        this.addresses = addresses;
        this.maxCqe = maxCqe;
        this.maxQpRdAtom = maxQpRdAtom;
        this.resources = new LoopbackResources(name, stack.resources);
    }

    @Override
    public long key() {
        return key;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int maxCqe() {
        return maxCqe;
    }

    @Override
    public int maxQpRdAtom() {
        return maxQpRdAtom;
    }

    public List<InetAddress> addresses() {
        return addresses;
    }

    /** Live resources of this device. */
    public LoopbackResources resources() {
        return resources;
    }

    /** Like rxe's (RXE_MAX_SRQ_WR). */
    @Override
    public int maxSrqWr() {
        return 1 << 20;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
        stack.ensureAvailable();
        return new LoopbackProtectionDomain(this);
    }

    /** Completion vectors of every loopback device: several, like a NIC's (rxe has one). */
    public static final int COMPLETION_VECTORS = 4;
    private final Map<LoopbackCompletionQueue, Integer> vectors = new ConcurrentHashMap<>();

    @Override
    public int numCompVectors() {
        return COMPLETION_VECTORS;
    }

    /** The completion vector {@code cq} was created on. */
    public int vectorOf(LoopbackCompletionQueue cq) {
        return vectors.get(cq);
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries, boolean events, int pollBatch, int vector,
            String description) {
        stack.ensureAvailable();
        if (vector < 0 || vector >= COMPLETION_VECTORS) {
            throw Errnos.fail("ibv_create_cq", Errnos.EINVAL, "completion vector " + vector + " (the device has "
                    + COMPLETION_VECTORS + ")");
        }
        if (entries < 1 || entries > maxCqe) {
            throw Errnos.fail("ibv_create_cq", Errnos.EINVAL, entries + " entries (max_cqe " + maxCqe + ")");
        }
        if (pollBatch < 1) {
            throw new IllegalArgumentException("poll batch " + pollBatch);
        }
        LoopbackCompletionQueue q = new LoopbackCompletionQueue(this, entries, events, pollBatch, description);
        cqs.add(q);
        vectors.put(q, vector);
        created.add(q);
        stack.faults.cqCreated(q);
        resources.add(LoopbackResources.Kind.COMPLETION_QUEUE, q, q.toString());
        return q;
    }

    /** The CQs created on this device, oldest first, closed ones included. */
    public java.util.List<LoopbackCompletionQueue> completionQueues() {
        return java.util.List.copyOf(created);
    }

    /** Completion-queue overflows on this device's CQs. */
    public long cqOverflows() {
        long n = 0;
        for (LoopbackCompletionQueue q : cqs) {
            n += q.overflows();
        }
        return n + closedCqOverflows;
    }

    private volatile long closedCqOverflows;

    void cqClosed(LoopbackCompletionQueue q) {
        synchronized (this) {
            closedCqOverflows += q.overflows();
        }
        cqs.remove(q);
        resources.remove(LoopbackResources.Kind.COMPLETION_QUEUE, q);
    }

    /** Queues an asynchronous event for {@link #awaitAsyncEvent}. Any thread. */
    void raise(AsyncEventInfo e) {
        synchronized (asyncEvents) {
            asyncEvents.add(e);
            asyncEvents.notifyAll();
        }
    }

    @Override
    public AsyncEventInfo awaitAsyncEvent(long timeoutNs) {
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        synchronized (asyncEvents) {
            while (true) {
                AsyncEventInfo e = asyncEvents.poll();
                if (e != null) {
                    return e;
                }
                if (asyncWakeup) {
                    asyncWakeup = false;
                    return null;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(asyncEvents, left);
                } catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return null;
                }
            }
        }
    }

    @Override
    public void wakeupAsyncEvents() {
        synchronized (asyncEvents) {
            asyncWakeup = true;
            asyncEvents.notifyAll();
        }
    }

    /** Events raised and not read yet (for tests). */
    public int pendingAsyncEvents() {
        synchronized (asyncEvents) {
            return asyncEvents.size();
        }
    }

    /** Stops or restarts completion generation on every CQ of this device. */
    void setHung(boolean h) {
        synchronized (stack.lock) {
            hung = h;
            if (!h) {
                for (LoopbackCompletionQueue q : cqs) {
                    q.releaseHeld();
                    for (LoopbackQueuePair qp : q.queuePairs) {
                        stack.wire.resume(qp);
                    }
                }
            }
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
