package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendWorkRequests;

/**
 * A queue pair created on a {@link CmId}. Posts are made by one thread at a time (the connection's owner).
 */
public interface QueuePair {
    int qpNum();

    /** Inline bytes the device granted. */
    int maxInlineData();

    /**
     * {@code ibv_post_send} of the whole chain in one call.
     *
     * @throws PostRefusedException when the device refused a request: those before it were posted
     */
    void postSend(SendWorkRequests chain);

    /**
     * {@code ibv_post_recv} of the whole chain in one call.
     *
     * @throws PostRefusedException when the device refused a request: those before it were posted
     */
    void postReceive(ReceiveWorkRequests chain);

    /** Moves the QP to ERR: everything posted completes with WR_FLUSH_ERR. */
    void toError();

    /**
     * {@code ibv_modify_qp} of {@code min_rnr_timer} alone (RTS to RTS; the IBA code 0..31): how long a peer
     * whose send found no receive posted here waits before retrying. rdma_cm brings an RC QP up with code 0
     * (655 ms), so this is called once the QP is in RTS.
     */
    void minRnrTimer(int code);
}
