package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.cm.PortSpace;

import reactor.util.annotation.Nullable;

/** An rdma_cm event channel ({@code rdma_create_event_channel}): the ids it makes and their events. */
public interface CmChannel {
    /** {@code rdma_create_id} on this channel. */
    CmId createId(PortSpace portSpace);

    /** The next event if one is ready (already acknowledged: it never blocks destroying its id), else null. */
    @Nullable
    CmEventInfo nextEvent();

    /** Sleeps until an event may be ready, {@link #wakeup()} is called, or {@code timeoutNs} passes. */
    void await(long timeoutNs);

    /** Makes a thread in {@link #await(long)} return now, or the next call return at once. Any thread. */
    void wakeup();

    /** Destroys the channel; its ids must be destroyed first. */
    void close();
}
