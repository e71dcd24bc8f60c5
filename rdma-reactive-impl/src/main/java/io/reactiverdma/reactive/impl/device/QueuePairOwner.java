package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.verbs.AsyncEventType;

/** What owns a queue pair of the device (a connection): told when the device reports its QP broken. */
public interface QueuePairOwner {
    /** The device reported {@code type} (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) for the QP. Any thread. */
    void queuePairFailed(AsyncEventType type);

    /**
     * {@code QP_LAST_WQE_REACHED}: the QP (on a shared receive queue, in ERR) will consume no more SRQ
     * receives; what it consumed is in its CQ. Any thread.
     */
    default void lastWorkRequestReached() {
    }
}
