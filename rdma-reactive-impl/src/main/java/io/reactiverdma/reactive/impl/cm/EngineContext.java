package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.Device;

/** What the cm layer needs of the engine above it: device resources, and knowing what is open. */
public interface EngineContext {
    /** The engine's resources for {@code device}, created on first use. */
    DeviceResources device(Device device);

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
