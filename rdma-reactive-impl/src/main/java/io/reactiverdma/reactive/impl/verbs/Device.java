package io.reactiverdma.reactive.impl.verbs;

import reactor.util.annotation.Nullable;

/**
 * An RDMA device as rdma_cm opened it ({@code struct ibv_context}): the engine allocates its protection
 * domain and completion queues here and reads its asynchronous events. rdma_cm owns the context itself.
 */
public interface Device {
    /** A key unique among this stack's devices (the context pointer on the real stack). */
    long key();

    /** The device name ("rxe0", "mlx5_0", "loopback0"). */
    String name();

    /** {@code max_cqe}: the largest completion queue. */
    int maxCqe();

    /** {@code max_qp_rd_atom}: RDMA READs/atomics a QP may have outstanding as target. */
    int maxQpRdAtom();

    /** {@code max_srq_wr}: the largest shared receive queue (0: the device has none). */
    int maxSrqWr();

    /** {@code ibv_alloc_pd}. */
    ProtectionDomain allocateProtectionDomain();

    /** {@code num_comp_vectors}: the completion vectors (interrupts) CQs can be bound to; at least 1. */
    int numCompVectors();

    /** {@link #createCompletionQueue(int, boolean, int, int, String)} on completion vector 0. */
    default CompletionQueue createCompletionQueue(int entries, boolean events, int pollBatch, String description) {
        return createCompletionQueue(entries, events, pollBatch, 0, description);
    }

    /**
     * {@code ibv_create_cq} with {@code entries} entries on completion vector {@code vector}
     * (0..{@link #numCompVectors()}-1), with a completion channel (and a wake-up) when {@code events};
     * {@code pollBatch} completions per poll.
     */
    CompletionQueue createCompletionQueue(int entries, boolean events, int pollBatch, int vector, String description);

    /**
     * The next asynchronous event ({@code ibv_get_async_event}, acknowledged), waiting at most
     * {@code timeoutNs}; null when none arrived or {@link #wakeupAsyncEvents()} was called.
     */
    @Nullable
    AsyncEventInfo awaitAsyncEvent(long timeoutNs);

    /** Makes a thread in {@link #awaitAsyncEvent(long)} return now. Any thread. */
    void wakeupAsyncEvents();

    /**
     * The last reader of this device's async events stopped: free what reading them held (the real stack's
     * wake-up eventfd). A later {@link #awaitAsyncEvent(long)} makes it again.
     */
    default void asyncEventsStopped() {
    }
}
