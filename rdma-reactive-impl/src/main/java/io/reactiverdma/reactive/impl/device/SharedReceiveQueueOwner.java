package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.verbs.AsyncEventType;

/** What owns a shared receive queue and acts on its async events (called on the device's async-event thread). */
public interface SharedReceiveQueueOwner {
    /** {@code SRQ_LIMIT_REACHED}: fewer receives than the armed limit remain posted (the limit is disarmed). */
    void limitReached();

    /** {@code SRQ_ERR}: the SRQ is broken; the connections receiving from it cannot go on. */
    void failed(AsyncEventType type);
}
