package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.verbs.CmId;

/**
 * The thread that makes a connection's rdma_cm calls (disconnect, destroying the QP and the id), in order
 * with the id's events: the cm layer's event loop, seen from the connection below it.
 */
public interface RdmaCmThread {
    /** Runs {@code task} on the rdma_cm thread, after what was handed over before it. */
    void execute(Runnable task);

    /** Events of {@code id} go nowhere from now on. */
    void unregister(CmId id);
}
