package io.reactiverdma.reactive.impl.verbs;

/**
 * The RDMA stack the engine runs on: rdma_cm for connections, and through each connection's id the
 * device it resolved to.
 */
public interface RdmaStack {
    /**
     * Throws {@link io.reactiverdma.reactive.RdmaException} naming why this stack cannot be used here
     * (libraries missing, no device); returns when it can.
     */
    void ensureAvailable();

    /** A new rdma_cm event channel: ids made from it report their events on it. */
    CmChannel openCmChannel();

    /** The RDMA devices rdma_cm can use (the same {@link Device}s its ids resolve to). */
    java.util.List<? extends Device> devices();

    /** A short name for logs ("rdma-core", "loopback"). */
    String name();
}
