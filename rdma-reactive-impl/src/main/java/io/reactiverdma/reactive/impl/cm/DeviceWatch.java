package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.Device;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * One rdma_cm id bound to an address of a device (port 0, never listening or connecting), held for as long as
 * the engine holds resources on the device. rdma_cm reports a device's removal only to the ids on it: once the
 * engine's connections, servers and endpoints there are closed, this id is what still tells it, so that it
 * releases its protection domain, pool and context there (on rxe, and any driver that cannot take a context
 * away from a process, the kernel finishes the removal only once every process has let go of it).
 */
public final class DeviceWatch {
    private final CmEventLoop cm;
    private final CmId id;

    private DeviceWatch(CmEventLoop cm, CmId id) {
        this.cm = cm;
        this.id = id;
    }

    /**
     * rdma_cm thread: watches {@code device} through {@code address} (an address of its netdev, as a connection
     * or endpoint on it was bound or resolved to); {@code removed} runs on the rdma_cm thread when rdma_cm reports
     * the device's removal. Null, with a warning, when the address is no longer the device's: the engine then
     * hears of a removal only through what it has open there.
     */
    @Nullable
    public static DeviceWatch start(CmEventLoop cm, Device device, InetAddress address, Runnable removed) {
        CmId id = cm.channel().createId(PortSpace.TCP);
        try {
            id.bind(new InetSocketAddress(address, 0));
            if (id.device().key() != device.key()) {
                throw new IllegalStateException(address.getHostAddress() + " is on " + id.device().name() + " now");
            }
        } catch (RuntimeException e) {
            id.close();
            EngineLog.warn("cannot watch the RDMA device " + device.name() + " through " + address.getHostAddress()
                    + " (" + e.getMessage() + "): its removal is noticed only while something is open on it");
            return null;
        }
        cm.register(id, e -> {
            if (e.type() == CmEventType.DEVICE_REMOVAL) {
                removed.run();
            }
        });
        return new DeviceWatch(cm, id);
    }

    /** Destroys the id (on the rdma_cm thread, after what was handed to it before). Any thread. */
    public void close() {
        cm.execute(() -> {
            cm.unregister(id);
            id.close();
        });
    }
}
