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

    /**
     * {@code device} was removed and the engine released everything it had on it: let go of its context, so
     * the kernel can finish the removal (rxe and other providers without context disassociation wait until
     * every process closed it). Returns true once the stack no longer lists the device (the context is then
     * closed, or closes with the last id still on it); the engine calls it again a little later while false.
     */
    default boolean releaseRemoved(Device device) {
        return true;
    }

    /** A short name for logs ("rdma-core", "loopback"). */
    String name();
}
