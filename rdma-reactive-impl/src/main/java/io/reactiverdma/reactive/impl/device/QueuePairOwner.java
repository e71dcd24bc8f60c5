package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.verbs.AsyncEventType;

/** What owns a queue pair of the device (a connection): told when the device reports its QP broken. */
public interface QueuePairOwner {
    /** The device reported {@code type} (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR) for the QP. Any thread. */
    void queuePairFailed(AsyncEventType type);
}
