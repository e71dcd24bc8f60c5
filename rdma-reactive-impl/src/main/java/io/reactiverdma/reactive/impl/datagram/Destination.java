package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.AddressHandle;
import io.reactiverdma.verbs.SendWorkRequests;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where sends go: an address handle with the remote QP number and Q_Key. Each send holds it from the moment
 * it picks it (any thread) until its completion or failure (poller thread); a destination that is retired
 * (evicted from its endpoint's cache, its group left, its endpoint closed) can be held no more and destroys
 * its address handle when the last holder lets go, so a send never names a destroyed handle and every
 * handle is destroyed exactly once.
 */
final class Destination {
    private static final int RETIRED = 1 << 30;

    private final AddressHandle ah;
    private final EngineMetrics metrics;
    final int qpn;
    final int qkey;
    /** When the answer this destination holds was obtained (peers are resolved again after a while). */
    final long createdNanos = System.nanoTime();
    private final AtomicBoolean refreshing = new AtomicBoolean();
    /** Holders, plus {@link #RETIRED} once retired: the handle goes when this reaches exactly RETIRED. */
    private final AtomicInteger state = new AtomicInteger();

    Destination(AddressHandle ah, int qpn, int qkey, EngineMetrics metrics) {
        this.ah = ah;
        this.qpn = qpn;
        this.qkey = qkey;
        this.metrics = metrics;
        metrics.addressHandles(1);
    }

    /** Poller thread: request {@code i} of {@code chain} goes here (the caller holds this destination). */
    void target(SendWorkRequests chain, int i) {
        ah.target(chain, i, qpn, qkey);
    }

    boolean isGroup() {
        return qpn == RdmaDatagramEndpoint.MULTICAST_QPN;
    }

    /** Any thread: one more send uses the handle; false once retired (the handle is or will be destroyed). */
    boolean hold() {
        for (;;) {
            int s = state.get();
            if ((s & RETIRED) != 0) {
                return false;
            }
            if (state.compareAndSet(s, s + 1)) {
                return true;
            }
        }
    }

    /** A send that held it completed or failed. */
    void release() {
        if (state.decrementAndGet() == RETIRED) {
            destroy();
        }
    }

    boolean isRetired() {
        return (state.get() & RETIRED) != 0;
    }

    /** Any thread: no new holders; destroyed now, or when the last holder releases. Idempotent. */
    void retire() {
        int before = state.getAndUpdate(s -> s | RETIRED);
        if (before == 0) {
            destroy();
        }
    }

    /** True for the one caller that is to resolve this destination's peer again. */
    boolean claimRefresh() {
        return refreshing.compareAndSet(false, true);
    }

    private void destroy() {
        metrics.addressHandles(-1);
        try {
            ah.close();
        } catch (RuntimeException e) {
            EngineLog.error("ibv_destroy_ah failed", e);
        }
    }
}
