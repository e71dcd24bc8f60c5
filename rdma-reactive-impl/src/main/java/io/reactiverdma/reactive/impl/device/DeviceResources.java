package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;

import reactor.util.annotation.Nullable;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every connection on one RDMA device shares: the protection domain, the registered buffer pool, the
 * flow-control words, and the shared completion queues with their pollers (one list per poller
 * configuration, so connections that asked for different idle strategies never share a poller).
 */
public final class DeviceResources {
    /** Pool slab size: the largest pooled buffer. */
    static final int SLAB_SIZE = 4 << 20;
    /** Entries of one shared CQ (capped by the device's max_cqe). */
    static final int SHARED_CQ_ENTRIES = 16384;
    private static final AtomicInteger POLLER_IDS = new AtomicInteger();

    final Device context;
    public final ProtectionDomain pd;
    public final BufferPool pool;
    public final ControlWords controlWords;
    /**
     * Whether the device has type 2 memory windows (probed once: rxe and most RoCE/IB devices do). Then every
     * registration allows MW_BIND, so any registered buffer can be exposed to one connection through a
     * window, and each connection's credit word is reachable through a window bound to its QP only.
     */
    public final boolean memoryWindows;
    private final Map<String, List<CompletionQueueHandle>> sharedCqs = new HashMap<>();
    /** Every CQ handle of this device (shared or not), for async CQ errors and for closing. */
    private final Set<CompletionQueueHandle> allCqs = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** Live connections by QP number, for async QP errors. */
    private final Map<Integer, QueuePairOwner> connections = new java.util.concurrent.ConcurrentHashMap<>();
    /** Live shared receive queues, for their async events. */
    private final Map<io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue, SharedReceiveQueueOwner> srqs =
            new java.util.concurrent.ConcurrentHashMap<>();
    private AsyncEventReader.Listener asyncEvents;
    private volatile Runnable removed;

    /** The device these resources belong to. */
    public Device context() {
        return context;
    }

    public DeviceResources(Device context) {
        this(context, PoolRelease.DEFAULT);
    }

    /** {@code release}: when the pool gives idle slabs back (on the engine's timer). */
    public DeviceResources(Device context, PoolRelease release) {
        this.context = context;
        this.pd = context.allocateProtectionDomain();
        this.memoryWindows = probeMemoryWindows(pd);
        this.pool = new BufferPool(this::register, SLAB_SIZE, context.name(), release, System::nanoTime,
                (task, delayNanos) -> io.reactiverdma.reactive.impl.support.EngineTimer.schedule(task,
                        java.time.Duration.ofNanos(delayNanos)), SlabPages.INSTANCE);
        this.controlWords = new ControlWords(pool, !memoryWindows);
    }

    /** Starts reading the device's async events (once the engine keeps these resources). */
    public void startAsyncEvents(java.util.function.Consumer<io.reactiverdma.reactive.DeviceEvent> publish, Runnable fatal,
            Runnable removed) {
        this.removed = removed;
        asyncEvents = new AsyncEventReader.Listener(this, publish, fatal);
        AsyncEventReader.attach(context, asyncEvents);
    }

    /** rdma_cm reported DEVICE_REMOVAL on one of the device's ids: the engine retires the device. */
    public void removed() {
        Runnable r = removed;
        if (r != null) {
            r.run();
        }
    }

    public void register(int qpNum, QueuePairOwner owner) {
        connections.put(qpNum, owner);
    }

    /**
     * Forgets {@code owner}'s QP number, unless another owner holds it by now: a connection unregisters on
     * its poller after the rdma_cm thread destroyed its QP, and the device may already have given the number
     * to a new connection's QP (rxe hands them out cyclically), whose async errors must still find it.
     */
    public void unregister(int qpNum, QueuePairOwner owner) {
        connections.remove(qpNum, owner);
    }

    QueuePairOwner ownerOf(int qpNum) {
        return connections.get(qpNum);
    }

    public void register(io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue srq, SharedReceiveQueueOwner owner) {
        srqs.put(srq, owner);
    }

    public void unregister(io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue srq) {
        srqs.remove(srq);
    }

    SharedReceiveQueueOwner ownerOf(@Nullable io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue srq) {
        return srq == null ? null : srqs.get(srq);
    }

    /**
     * A CQ of {@code entries} (at most the device's max_cqe) that no other connection is given: connections
     * reserve on it themselves; it stops once nothing is reserved any more (see {@link #releaseCq}).
     */
    public CompletionQueueHandle dedicatedCq(RdmaTransportConfig config, int entries, EngineMetrics metrics) {
        int size = Math.min(entries, Math.max(1, context.maxCqe()));
        CompletionQueueHandle h = new CompletionQueueHandle(context, size, config.option(RdmaOption.IDLE_STRATEGY),
                config.option(RdmaOption.POLL_BATCH_SIZE), config.option(RdmaOption.COMPLETION_VECTOR), metrics,
                "rdma-poller-" + POLLER_IDS.incrementAndGet()
                + "-" + context.name() + "-srq", true, "srq@" + Integer.toHexString(System.identityHashCode(this)));
        allCqs.add(h);
        return h;
    }

    CompletionQueueHandle handleOf(io.reactiverdma.reactive.impl.verbs.CompletionQueue cq) {
        for (CompletionQueueHandle h : allCqs) {
            if (h.cq == cq) {
                return h;
            }
        }
        return null;
    }

    /** How long {@link #close()} waits for the pollers to end (a poller sleeps at most 1 s at a time). */
    private static final long POLLER_STOP_WAIT_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(5);

    /**
     * Releases what the device's connections shared, after every one of them closed (or the shutdown timeout
     * passed): stops the async event reader and any poller left and waits for the pollers to end (each
     * destroys its CQ's queue pairs, then the CQ, on its own thread: nothing posts on them any more), then
     * deregisters the pool's memory (each region deallocates the windows bound to it first) and frees the
     * protection domain (with whatever queue pairs are left). Whoever still calls on an object freed here
     * (the rdma_cm thread finishing a disconnect) gets a closed-resource error, never a freed object: the
     * native layer's call guard.
     */
    public void close() {
        if (asyncEvents != null) {
            AsyncEventReader.detach(context, asyncEvents);
        }
        for (CompletionQueueHandle h : allCqs) {
            h.stop();
        }
        long deadline = System.nanoTime() + POLLER_STOP_WAIT_NS;
        for (CompletionQueueHandle h : allCqs) {
            long leftMs = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
            if (!h.awaitStopped(leftMs)) {
                EngineLog.warn(context.name() + ": a completion poller did not stop within "
                        + POLLER_STOP_WAIT_NS / 1_000_000 + " ms; its CQ is closed under it");
            }
        }
        try {
            pool.close();
        } finally {
            try {
                pd.close();
            } catch (RuntimeException e) {
                EngineLog.error(context.name() + ": ibv_dealloc_pd failed", e);
            }
        }
    }

    private static boolean probeMemoryWindows(ProtectionDomain pd) {
        try {
            pd.allocateWindow().deallocate();
            return true;
        } catch (RuntimeException e) {
            EngineLog.debug("no type 2 memory windows (" + e.getMessage() + "): credit words are registered one by one");
            return false;
        }
    }

    /**
     * LOCAL_WRITE, the remote access asked for, and MW_BIND where the device has windows: MW_BIND grants a
     * peer nothing by itself, only the windows this side binds onto the memory, each for one connection.
     */
    private Registration register(ByteBuffer buffer, Set<RemoteAccess> remote) {
        int access = AccessFlags.LOCAL_WRITE | (memoryWindows ? AccessFlags.MW_BIND : 0);
        for (RemoteAccess a : remote) {
            access |= switch (a) {
                case READ -> AccessFlags.REMOTE_READ;
                case WRITE -> AccessFlags.REMOTE_WRITE;
                case ATOMIC -> AccessFlags.REMOTE_ATOMIC;
            };
        }
        return pd.register(buffer, access);
    }

    /**
     * A CQ with {@code entries} reserved for one connection: its own (PER_CONNECTION) or a shared one with
     * room left (a new shared one when none has).
     */
    public CompletionQueueHandle acquireCq(RdmaTransportConfig config, int entries, EngineMetrics metrics) {
        PollerIdleStrategy strategy = config.option(RdmaOption.IDLE_STRATEGY);
        int batch = config.option(RdmaOption.POLL_BATCH_SIZE);
        // Wraps around so one configuration fits every device (rxe has 1 vector, a NIC one per CPU or so).
        int vector = config.option(RdmaOption.COMPLETION_VECTOR) % Math.max(1, context.numCompVectors());
        int maxCqe = Math.max(1, context.maxCqe());
        if (entries > maxCqe) {
            throw new io.reactiverdma.reactive.InvalidRequestException(
                    io.reactiverdma.reactive.InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "send plus receive queue depth (" + entries + ") exceeds the device's max_cqe (" + maxCqe + ")");
        }
        if (config.option(RdmaOption.COMPLETION_QUEUE_MODE) == CompletionQueueMode.PER_CONNECTION) {
            CompletionQueueHandle h = new CompletionQueueHandle(context, entries, strategy, batch, vector,
                    metrics, "rdma-poller-" + POLLER_IDS.incrementAndGet() + "-" + context.name(), false, null);
            h.tryReserve(entries);
            allCqs.add(h);
            return h;
        }
        String key = strategy + "/" + batch + "/v" + vector + metrics.cqKeySuffix();
        synchronized (sharedCqs) {
            List<CompletionQueueHandle> list = sharedCqs.computeIfAbsent(key, k -> new ArrayList<>());
            for (CompletionQueueHandle h : list) {
                if (h.tryReserve(entries)) {
                    return h;
                }
            }
            int size = Math.min(Math.max(SHARED_CQ_ENTRIES, entries), maxCqe);
            CompletionQueueHandle h = new CompletionQueueHandle(context, size, strategy, batch, vector, metrics,
                    "rdma-poller-" + POLLER_IDS.incrementAndGet() + "-" + context.name() + "-shared", true, key);
            if (!h.tryReserve(entries)) {
                h.stop();
                Throwable pollerFailure = h.poller.failure();
                if (pollerFailure != null) {
                    // the new CQ's poller failed before this connection could reserve room on it (seen once
                    // in LoopbackEngineDefectsTest with an injected ibv_poll_cq failure): not the caller's input,
                    // and not typed here, so the step that asked (a connect, a datagram bind) wraps it in its own
                    throw new IllegalStateException("the completion poller of a new completion queue on "
                            + context.name() + " failed: " + pollerFailure.getMessage(), pollerFailure);
                }
                throw new io.reactiverdma.reactive.InvalidRequestException(
                        io.reactiverdma.reactive.InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "send plus receive queue depth (" + entries + ") exceeds the device's max_cqe (" + maxCqe + ")");
            }
            list.add(h);
            allCqs.add(h);
            return h;
        }
    }

    /**
     * Gives back a connection's entries. A per-connection CQ is destroyed; so is a shared one that no
     * connection uses any more: its poller thread would otherwise stay (and, spinning, burn a core) for
     * nothing. The next connection makes a new one.
     */
    public void releaseCq(CompletionQueueHandle h, int entries) {
        if (!h.shared) {
            h.unreserve(entries);
            allCqs.remove(h);
            h.stop();
            return;
        }
        synchronized (sharedCqs) {
            if (h.unreserve(entries)) {
                List<CompletionQueueHandle> list = sharedCqs.get(h.key);
                if (list != null) {
                    list.remove(h);
                }
                allCqs.remove(h);
                h.stop(); // under the lock (it does not wait): no acquireCq can pick it meanwhile
            }
        }
    }

}
