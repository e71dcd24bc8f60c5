package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.AddressHandle;
import io.reactiverdma.verbs.SendWorkRequests;

/**
 * Where sends go: an address handle with the remote QP number and Q_Key. Its counts are the poller thread's:
 * a destination that is retired (its group left, its endpoint closed) destroys its address handle once no
 * posted send names it any more.
 */
final class Destination {
    private final AddressHandle ah;
    final int qpn;
    final int qkey;
    private int outstanding;
    private boolean retired;
    private boolean destroyed;

    Destination(AddressHandle ah, int qpn, int qkey) {
        this.ah = ah;
        this.qpn = qpn;
        this.qkey = qkey;
    }

    /** Poller thread: request {@code i} of {@code chain} goes here; one more send outstanding. */
    void target(SendWorkRequests chain, int i) {
        ah.target(chain, i, qpn, qkey);
    }

    boolean isRetired() {
        return retired;
    }

    void posted() {
        outstanding++;
    }

    void completed() {
        outstanding--;
        if (retired && outstanding == 0) {
            destroy();
        }
    }

    /** Poller thread (or after it ended): no new sends; destroyed now or after the last outstanding one. */
    void retire() {
        retired = true;
        if (outstanding == 0) {
            destroy();
        }
    }

    private void destroy() {
        if (destroyed) {
            return;
        }
        destroyed = true;
        try {
            ah.close();
        } catch (RuntimeException e) {
            EngineLog.error("ibv_destroy_ah failed", e);
        }
    }
}
