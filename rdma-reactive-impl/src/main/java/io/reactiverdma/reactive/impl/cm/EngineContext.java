package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.verbs.CmId;

/** What the cm layer needs of the engine above it: device resources, and knowing what is open. */
public interface EngineContext {
    /**
     * The engine's resources for the device of {@code id} (bound or resolved: it has a local address), created
     * on first use, when the engine also starts watching the device through that address (rdma_cm thread).
     */
    DeviceResources device(CmId id);

    /** A connection exists (connecting or accepted): shutdown closes it. */
    void track(EngineConnection c);

    /** A connect attempt is under way: shutdown fails it. */
    void track(ClientConnector attempt);

    void untrack(ClientConnector attempt);

    /** The engine's shared receive queues (rdma_cm thread). */
    io.reactiverdma.reactive.impl.connection.SharedReceiveGroups sharedReceiveGroups();

    /** rdma_cm reported DEVICE_REMOVAL on {@code id}. */
    void deviceRemoved(CmId id);
}
