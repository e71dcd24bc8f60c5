package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Finds a device without a connection: by its name, or by an address of its netdev (rdma_cm's binding). The
 * name or address is looked up before the work reaches the rdma_cm thread (as a client's or server's host is,
 * see {@link ConnectParams}): a slow DNS answer must not stall every connection of the engine.
 */
public final class DeviceLookup {
    private DeviceLookup() {
    }

    /** What {@code addressOrDevice} named: a device, or else an address of one. */
    public record Target(String addressOrDevice, @Nullable Device device, @Nullable InetAddress address) {
    }

    /**
     * The device named {@code addressOrDevice}, else its address resolved: at once for an IP literal, otherwise
     * on a thread that may block (never the rdma_cm thread). Fails with {@link RdmaException} when it is
     * neither a device's name nor an address.
     */
    public static Mono<Target> target(RdmaStack stack, String addressOrDevice) {
        return ConnectParams.offTheCmThread(ConnectParams.literal(addressOrDevice), () -> {
            for (Device d : stack.devices()) {
                if (d.name().equals(addressOrDevice)) {
                    return new Target(addressOrDevice, d, null);
                }
            }
            try {
                return new Target(addressOrDevice, null, InetAddress.getByName(addressOrDevice));
            } catch (UnknownHostException e) {
                throw new RdmaException("no RDMA device is named " + addressOrDevice + ", and it is no address either",
                        e);
            }
        });
    }

    /** A device found, and the address it was found by (null when found by its name). */
    public record Found(Device device, @Nullable InetAddress address) {
    }

    /**
     * rdma_cm thread: the device {@code target} names, else the one an rdma_cm id bound to its address resolves
     * to (the id is destroyed again).
     *
     * @throws RdmaException when no device has that address
     */
    public static Found find(CmEventLoop cm, Target target) {
        if (target.device() != null) {
            return new Found(target.device(), null);
        }
        CmId id = cm.channel().createId(PortSpace.TCP);
        try {
            id.bind(new InetSocketAddress(target.address(), 0));
            return new Found(id.device(), target.address());
        } catch (RuntimeException e) {
            throw new RdmaException("no RDMA device is named " + target.addressOrDevice() + " or has that address: "
                    + e.getMessage(), e);
        } finally {
            id.close();
        }
    }

    /**
     * An address of {@code device}: the first address of an interface that is up which rdma_cm binds to that
     * device; null when there is none (a device whose port has no IP address, or a stack without real
     * interfaces). One bind per address tried: called once, for a device the engine has no resources on yet.
     */
    @Nullable
    public static InetAddress addressOf(CmEventLoop cm, Device device) {
        List<InetAddress> candidates = new ArrayList<>();
        try {
            for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (nic.isUp() && !nic.isLoopback()) {
                    candidates.addAll(Collections.list(nic.getInetAddresses()));
                }
            }
        } catch (SocketException e) {
            return null;
        }
        for (InetAddress a : candidates) {
            CmId id = cm.channel().createId(PortSpace.TCP);
            try {
                id.bind(new InetSocketAddress(a, 0));
                if (id.device().key() == device.key()) {
                    return a;
                }
            } catch (RuntimeException notThisDevice) {
                // not an RDMA device's address
            } finally {
                id.close();
            }
        }
        return null;
    }
}
