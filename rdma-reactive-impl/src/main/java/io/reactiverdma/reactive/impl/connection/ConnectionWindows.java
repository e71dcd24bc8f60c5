package io.reactiverdma.reactive.impl.connection;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The bound {@link ExposedWindow}s of one connection, revoked with it: deallocated on the rdma_cm thread just
 * before the QP is destroyed (the QP is in ERR then: nothing arrives through them), then ended on the poller
 * thread (buffer holds dropped, revocations complete). Added and removed on the poller thread; read by the
 * rdma_cm thread once the connection is releasing, when no window is added any more.
 */
final class ConnectionWindows {
    private final Set<ExposedWindow> bound = ConcurrentHashMap.newKeySet();

    void add(ExposedWindow w) {
        bound.add(w);
    }

    void remove(ExposedWindow w) {
        bound.remove(w);
    }

    /** rdma_cm thread, before the QP is destroyed. */
    void deallocateAll() {
        for (ExposedWindow w : bound) {
            w.deallocate();
        }
    }

    /** Poller thread, after the QP is destroyed. */
    void endAll() {
        List<ExposedWindow> left = new ArrayList<>(bound);
        for (ExposedWindow w : left) {
            w.endWithConnection();
        }
    }
}
