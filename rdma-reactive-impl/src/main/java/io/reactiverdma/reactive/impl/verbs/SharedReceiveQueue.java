package io.reactiverdma.reactive.impl.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): one pool of posted receives that every queue pair created
 * with it (see {@link QpSpec#srq()}) takes its receives from. A completion of such a receive arrives on the
 * consuming QP's CQ, naming that QP's number. Posts are made by one thread at a time (the SRQ's owner).
 */
public interface SharedReceiveQueue {
    /** {@code max_wr} as granted: the most receives it holds. */
    int maxWr();

    /**
     * {@code ibv_post_srq_recv} of the whole chain in one call.
     *
     * @throws PostRefusedException when the device refused a request: those before it were posted
     */
    void postReceive(io.reactiverdma.verbs.ReceiveWorkRequests chain);

    /**
     * {@code ibv_modify_srq(srq_limit)}: one {@code SRQ_LIMIT_REACHED} async event when fewer than
     * {@code limit} receives remain posted; then disarmed until armed again.
     */
    void armLimit(int limit);

    /** {@code ibv_destroy_srq}, after every QP on it is destroyed. Receives still posted are dropped. */
    void close();
}
