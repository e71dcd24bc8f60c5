package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** Finds a device without a connection: by its name, or by an address of its netdev (rdma_cm's binding). */
public final class DeviceLookup {
    private DeviceLookup() {
    }

    /**
     * rdma_cm thread: the device named {@code addressOrDevice}, else the one an rdma_cm id bound to that
     * address resolves to (the id is destroyed again).
     *
     * @throws RdmaException when neither finds one
     */
    public static Device find(RdmaStack stack, CmEventLoop cm, String addressOrDevice) {
        for (Device d : stack.devices()) {
            if (d.name().equals(addressOrDevice)) {
                return d;
            }
        }
        InetAddress ip;
        try {
            ip = InetAddress.getByName(addressOrDevice);
        } catch (UnknownHostException e) {
            throw new RdmaException("no RDMA device is named " + addressOrDevice + ", and it is no address either", e);
        }
        CmId id = cm.channel().createId(PortSpace.TCP);
        try {
            id.bind(new InetSocketAddress(ip, 0));
            return id.device();
        } catch (RuntimeException e) {
            throw new RdmaException("no RDMA device is named " + addressOrDevice + " or has that address: "
                    + e.getMessage(), e);
        } finally {
            id.close();
        }
    }
}
