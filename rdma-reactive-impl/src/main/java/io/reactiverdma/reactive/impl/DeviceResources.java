package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.DeviceAttributes;
import io.reactiverdma.verbs.MemoryRegion;
import io.reactiverdma.verbs.ProtectionDomain;
import io.reactiverdma.verbs.VerbsContext;

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
final class DeviceResources {
    /** Pool slab size: the largest pooled buffer. */
    static final int SLAB_SIZE = 4 << 20;
    /** Entries of one shared CQ (capped by the device's max_cqe). */
    static final int SHARED_CQ_ENTRIES = 16384;
    private static final AtomicInteger POLLER_IDS = new AtomicInteger();

    final VerbsContext context;
    final ProtectionDomain pd;
    final BufferPool pool;
    final ControlWords controlWords;
    final DeviceAttributes attributes;
    private final Map<String, List<CompletionQueueHandle>> sharedCqs = new HashMap<>();

    DeviceResources(VerbsContext context) {
        this.context = context;
        this.attributes = context.queryDevice();
        this.pd = context.allocPd();
        this.pool = new BufferPool(this::register, SLAB_SIZE, context.deviceName());
        this.controlWords = new ControlWords(pool);
    }

    private BufferPool.Registration register(ByteBuffer buffer, Set<RemoteAccess> remote) {
        int access = AccessFlags.LOCAL_WRITE;
        for (RemoteAccess a : remote) {
            access |= switch (a) {
                case READ -> AccessFlags.REMOTE_READ;
                case WRITE -> AccessFlags.REMOTE_WRITE;
                case ATOMIC -> AccessFlags.REMOTE_ATOMIC;
            };
        }
        MemoryRegion mr = pd.registerMemory(buffer, access);
        return new BufferPool.Registration() {
            @Override
            public long address() {
                return mr.address();
            }

            @Override
            public int lkey() {
                return mr.lkey();
            }

            @Override
            public int rkey() {
                return mr.rkey();
            }

            @Override
            public void deregister() {
                mr.close();
            }
        };
    }

    /**
     * A CQ with {@code entries} reserved for one connection: its own (PER_CONNECTION) or a shared one with
     * room left (a new shared one when none has).
     */
    CompletionQueueHandle acquireCq(RdmaTransportConfig config, int entries, EngineMetrics metrics) {
        PollerIdleStrategy strategy = config.option(RdmaOption.IDLE_STRATEGY);
        int batch = config.option(RdmaOption.POLL_BATCH_SIZE);
        int maxCqe = Math.max(1, attributes.maxCqe());
        if (entries > maxCqe) {
            throw new io.reactiverdma.reactive.InvalidRequestException(
                    io.reactiverdma.reactive.InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "send plus receive queue depth (" + entries + ") exceeds the device's max_cqe (" + maxCqe + ")");
        }
        if (config.option(RdmaOption.COMPLETION_QUEUE_MODE) == CompletionQueueMode.PER_CONNECTION) {
            CompletionQueueHandle h = new CompletionQueueHandle(context, entries, strategy, batch,
                    metrics, "rdma-poller-" + POLLER_IDS.incrementAndGet() + "-" + context.deviceName(), false, null);
            h.tryReserve(entries);
            return h;
        }
        String key = strategy + "/" + batch + metrics.cqKeySuffix();
        synchronized (sharedCqs) {
            List<CompletionQueueHandle> list = sharedCqs.computeIfAbsent(key, k -> new ArrayList<>());
            for (CompletionQueueHandle h : list) {
                if (h.tryReserve(entries)) {
                    return h;
                }
            }
            int size = Math.min(Math.max(SHARED_CQ_ENTRIES, entries), maxCqe);
            CompletionQueueHandle h = new CompletionQueueHandle(context, size, strategy, batch, metrics,
                    "rdma-poller-" + POLLER_IDS.incrementAndGet() + "-" + context.deviceName() + "-shared", true, key);
            if (!h.tryReserve(entries)) {
                h.stop();
                throw new io.reactiverdma.reactive.InvalidRequestException(
                        io.reactiverdma.reactive.InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "send plus receive queue depth (" + entries + ") exceeds the device's max_cqe (" + maxCqe + ")");
            }
            list.add(h);
            return h;
        }
    }

    /**
     * Gives back a connection's entries. A per-connection CQ is destroyed; so is a shared one that no
     * connection uses any more: its poller thread would otherwise stay (and, spinning, burn a core) for
     * nothing. The next connection makes a new one.
     */
    void releaseCq(CompletionQueueHandle h, int entries) {
        if (!h.shared) {
            h.unreserve(entries);
            h.stop();
            return;
        }
        synchronized (sharedCqs) {
            if (h.unreserve(entries)) {
                List<CompletionQueueHandle> list = sharedCqs.get(h.key);
                if (list != null) {
                    list.remove(h);
                }
                h.stop(); // under the lock: no acquireCq can pick it meanwhile
            }
        }
    }

}
