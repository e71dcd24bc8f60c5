package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.verbs.AsyncEventType;

import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A completion queue of {@code entries} entries with an optional completion channel. An overflow (a
 * completion arriving while {@code entries} are unpolled) is never silent: it is counted
 * ({@link #overflows()}) and raises a CQ_ERR async event; the completion is kept nevertheless (a real CQ
 * would be unusable from then on; keeping it lets the test see everything that happened).
 *
 * <p>The channel: {@link #arm()} requests one event for the next completion; each completion arriving while
 * armed produces one event and disarms; {@link #await} consumes one event (true) or a wake-up (false).
 */
public final class LoopbackCompletionQueue implements CompletionQueue {
    /** One work completion ({@code struct ibv_wc} fields, imm in host order). */
    public record Completion(int qpNum, long wrId, int status, int opcode, int vendorErr, int byteLen, int immData,
                             int wcFlags, int srcQp) {
        /** A completion of a connected QP (no source QP to name), of no QP in particular. */
        public Completion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags) {
            this(0, wrId, status, opcode, vendorErr, byteLen, immData, wcFlags, 0);
        }

        /** A datagram's completion, naming its source QP. */
        public Completion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags,
                int srcQp) {
            this(0, wrId, status, opcode, vendorErr, byteLen, immData, wcFlags, srcQp);
        }

        /** A completion naming the QP it belongs to (a receive of a shared receive queue needs it). */
        public Completion(int qpNum, long wrId, int status, int opcode, int vendorErr, int byteLen, int immData,
                int wcFlags) {
            this(qpNum, wrId, status, opcode, vendorErr, byteLen, immData, wcFlags, 0);
        }

    }

    /** Which calls a {@link LoopbackFaults#failCqCalls} fault hits. */
    public enum Call { POLL, ARM, AWAIT, ANY }

    final LoopbackDevice device;
    private final int entries;
    private final boolean events;
    private final int batch;
    private final String description;
    private final ArrayDeque<Completion> queue = new ArrayDeque<>();
    private final ArrayDeque<Completion> held = new ArrayDeque<>();
    private final Completion[] scratch;
    final Set<LoopbackQueuePair> queuePairs = ConcurrentHashMap.newKeySet();
    /**
     * On a zero-cost stack: the completions its poller thread wrote at post time ({@link ZeroCostQueuePair}),
     * confined to that thread; null otherwise. Completions other threads generate (datagrams on the wire
     * thread) still go through {@link #push}.
     */
    private final CompletionRing ring;
    /** The thread that polls this CQ (the last one that did); the zero-cost path posts only from it. */
    volatile Thread owner;
    /** Zero-cost QPs moved to ERR by another thread, whose receives the poller flushes (this monitor). */
    private final ArrayDeque<LoopbackQueuePair> flushes = new ArrayDeque<>();
    private volatile boolean flushRequested;
    /** Completions in {@link #queue}: lets the zero-cost poll skip this monitor when there are none. */
    private volatile int queued;
    private long ringDelivered;
    private volatile boolean armed;
    private int pendingEvents;
    private boolean wakeup;
    private long overflows;
    private long delivered;
    private volatile boolean closed;

    LoopbackCompletionQueue(LoopbackDevice device, int entries, boolean events, int batch, String description) {
        this.device = device;
        this.entries = entries;
        this.events = events;
        this.batch = batch;
        this.description = description;
        this.scratch = new Completion[batch];
        this.ring = device.stack.zeroCost ? new CompletionRing(entries) : null;
    }

    /**
     * Adds a completion the poller thread generated itself (the zero-cost path): into the ring, no lock, no
     * object. Beyond {@code entries} unpolled it is an overflow, counted and raised like {@link #push}'s.
     */
    void addOwned(int qpNum, long wrId, int status, int opcode, int byteLen, int imm, int wcFlags) {
        if (closed) {
            return;
        }
        if (!ring.add(qpNum, wrId, status, opcode, byteLen, imm, wcFlags)) {
            synchronized (this) {
                overflows++;
            }
            device.raise(new AsyncEventInfo(AsyncEventType.CQ_ERR, -1, -1, this));
        }
        if (armed) { // the poller armed and will sleep: the completion is its event
            synchronized (this) {
                if (armed) {
                    armed = false;
                    pendingEvents++;
                    notifyAll();
                }
            }
        }
    }

    /** A zero-cost QP entered ERR on another thread: the poller flushes its receives at its next poll. */
    void requestFlush(LoopbackQueuePair qp) {
        synchronized (this) {
            flushes.add(qp);
            flushRequested = true;
            if (armed) {
                armed = false;
                pendingEvents++;
            }
            notifyAll();
        }
    }

    private void runRequestedFlushes() {
        while (true) {
            LoopbackQueuePair qp;
            synchronized (this) {
                qp = flushes.poll();
                if (qp == null) {
                    flushRequested = false;
                    return;
                }
            }
            if (qp.state == LoopbackQueuePair.State.ERR) {
                qp.zero.flushReceives();
            }
        }
    }

    /** The zero-cost poll: the ring first (no lock), then what other threads pushed, if anything. */
    private int pollOwned(Handler handler) {
        Thread t = Thread.currentThread();
        if (owner != t) {
            owner = t;
        }
        if (closed) {
            throw new IllegalStateException("ibv_poll_cq: the completion queue " + description + " was destroyed");
        }
        if (flushRequested) {
            runRequestedFlushes();
        }
        int n = Math.min(batch, ring.size());
        currentSrcQp = 0; // connected QPs only in the ring
        for (int i = 0; i < n; i++) {
            ring.dispatchOldest(handler);
        }
        ringDelivered += n;
        return n < batch && queued > 0 ? n + pollQueued(handler, batch - n) : n;
    }

    /**
     * Adds a completion (wire thread): its work request stops being outstanding. Held back while the device
     * hangs (then it still counts as outstanding).
     */
    void push(Completion c) {
        boolean overflow;
        synchronized (this) {
            if (device.hung && !closed) {
                held.add(c);
                return;
            }
            device.resources.outstanding(-1);
            if (closed) {
                return;
            }
            overflow = addLocked(c);
        }
        if (overflow) {
            device.raise(new AsyncEventInfo(AsyncEventType.CQ_ERR, -1, -1, this));
        }
    }

    private boolean addLocked(Completion c) {
        boolean overflow = queue.size() >= entries;
        if (overflow) {
            overflows++;
            System.err.println("LOOPBACK CQ OVERFLOW on " + this + ": " + queue.size() + " completions unpolled");
        }
        queue.add(c);
        queued = queue.size();
        if (armed) {
            armed = false;
            pendingEvents++;
        }
        notifyAll();
        return overflow;
    }

    /** Removes the unpolled completions of QP {@code qpNum} (an mlx-like destroy); returns how many. */
    synchronized int clean(int qpNum) {
        int before = queue.size() + held.size();
        queue.removeIf(c -> c.qpNum() == qpNum);
        queued = queue.size();
        int heldBefore = held.size();
        held.removeIf(c -> c.qpNum() == qpNum);
        device.resources.outstanding(-(heldBefore - held.size())); // held ones still counted as outstanding
        int n = before - queue.size() - held.size();
        cleaned += n;
        return n;
    }

    /** Completions removed by {@link #clean} so far. */
    private long cleaned;

    public synchronized long cleaned() {
        return cleaned;
    }

    void releaseHeld() {
        int overflowed = 0;
        synchronized (this) {
            Completion c;
            while ((c = held.poll()) != null) {
                device.resources.outstanding(-1);
                if (addLocked(c)) {
                    overflowed++;
                }
            }
        }
        for (int i = 0; i < overflowed; i++) {
            device.raise(new AsyncEventInfo(AsyncEventType.CQ_ERR, -1, -1, this));
        }
    }

    private void check(String call, Call kind) {
        if (closed) {
            throw new IllegalStateException(call + ": the completion queue " + description + " was destroyed");
        }
        device.stack.faults.cqCall(this, kind);
    }

    @Override
    public int poll(Handler handler) {
        if (ring != null) {
            return pollOwned(handler);
        }
        check("ibv_poll_cq", Call.POLL);
        return pollQueued(handler, batch);
    }

    private int pollQueued(Handler handler, int max) {
        int n = 0;
        synchronized (this) {
            Completion c;
            while (n < max && (c = queue.poll()) != null) {
                scratch[n++] = c;
            }
            delivered += n;
            queued = queue.size();
        }
        for (int i = 0; i < n; i++) {
            Completion c = scratch[i];
            scratch[i] = null;
            currentSrcQp = c.srcQp();
            handler.onCompletion(c.qpNum(), c.wrId(), c.status(), c.opcode(), c.vendorErr(), c.byteLen(), c.immData(), c.wcFlags());
        }
        return n;
    }

    /** The src_qp of the completion being handed to the handler. */
    private int currentSrcQp;

    @Override
    public int sourceQpn() {
        return currentSrcQp;
    }

    @Override
    public boolean supportsEvents() {
        return events;
    }

    @Override
    public void arm() {
        check("ibv_req_notify_cq", Call.ARM);
        if (!events) {
            throw new IllegalStateException("ibv_req_notify_cq: " + description + " has no completion channel");
        }
        synchronized (this) {
            armed = true;
        }
    }

    @Override
    public boolean await(long timeoutNs) {
        check("ibv_get_cq_event", Call.AWAIT);
        if (!events) {
            throw new IllegalStateException("ibv_get_cq_event: " + description + " has no completion channel");
        }
        long deadline = System.nanoTime() + Math.max(0, timeoutNs);
        synchronized (this) {
            while (true) {
                if (pendingEvents > 0) {
                    pendingEvents--;
                    return true;
                }
                if (wakeup) {
                    wakeup = false;
                    return false;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || closed) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
    }

    @Override
    public void wakeup() {
        synchronized (this) {
            wakeup = true;
            notifyAll();
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        if (!queuePairs.isEmpty()) {
            throw Errnos.fail("ibv_destroy_cq", Errnos.EBUSY, queuePairs.size() + " queue pairs still use " + this);
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            device.resources.outstanding(-held.size());
            held.clear();
            notifyAll();
        }
        device.cqClosed(this);
    }

    public boolean isClosed() {
        return closed;
    }

    /** Completions that arrived while {@code entries} were already unpolled. */
    public synchronized long overflows() {
        return overflows;
    }

    /** Completions waiting to be polled. */
    public synchronized int unpolled() {
        return queue.size() + (ring != null ? ring.size() : 0); // the ring: exact on its poller thread only
    }

    /** Completions handed to pollers so far. */
    public synchronized long polled() {
        return delivered + ringDelivered; // the ring's count: exact on its poller thread only
    }

    public int entries() {
        return entries;
    }

    public String description() {
        return description;
    }

    @Override
    public String toString() {
        return "cq[" + description + "@" + device.name() + ", " + entries + " entries]";
    }
}
