package io.reactiverdma.natives;

import io.reactiverdma.verbs.PortAttributes;
import io.reactiverdma.verbs.PortState;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.VerbsDevice;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds an RDMA device with an ACTIVE port, for {@link RdmaNative#isAvailable()}: {@code ibv_get_device_list},
 * open each device, {@code ibv_query_port} on each of its ports.
 */
final class DeviceProbe {
    static final String NO_DEVICE = "no RDMA device found (is rdma_rxe loaded? For Soft-RoCE: modprobe rdma_rxe && "
            + "rdma link add rxe0 type rxe netdev <interface>; or run the device tests in the project's VM with "
            + "scripts/native-tests)";

    private DeviceProbe() {
    }

    /** Returns null when some device has an ACTIVE port, else the reason (no device, ports down ...). */
    static Throwable findActivePort() {
        List<VerbsDevice> devices;
        try {
            devices = VerbsDevice.list();
        } catch (NativeCallException e) {
            return new RdmaUnavailableException(NO_DEVICE + ": " + e.getMessage(), e);
        }
        if (devices.isEmpty()) {
            return new RdmaUnavailableException(NO_DEVICE);
        }
        List<String> problems = new ArrayList<>();
        RuntimeException firstFailure = null;
        for (VerbsDevice device : devices) {
            try (VerbsContext ctx = device.open()) {
                int ports = ctx.queryDevice().physPortCount();
                if (ports == 0) {
                    problems.add("device " + device.name() + " present but has no ports");
                }
                for (int port = 1; port <= ports; port++) {
                    PortAttributes attr = ctx.queryPort(port);
                    if (attr.state() == PortState.ACTIVE) {
                        return null;
                    }
                    problems.add(describe(device.name(), port, attr));
                }
            } catch (RuntimeException e) {
                problems.add("device " + device.name() + " present but cannot be queried: " + e.getMessage());
                if (firstFailure == null) {
                    firstFailure = e;
                }
            }
        }
        String message = String.join("; ", problems);
        return firstFailure == null ? new RdmaUnavailableException(message)
                : new RdmaUnavailableException(message, firstFailure);
    }

    /** "device rxe0 present but port 1 is DOWN (...hint...)". */
    static String describe(String device, int port, PortAttributes attr) {
        PortState state = attr.state();
        String hint = switch (state) {
            case DOWN -> "the link is down: is the network interface under it up and carrying a link "
                    + "(ip link set <interface> up)?";
            case INIT -> "the port is initialising: on InfiniBand a subnet manager (opensm) must bring it up";
            case ARMED -> "the port is armed but not yet active: wait for the subnet manager";
            default -> "not ACTIVE";
        };
        return "device " + device + " present but port " + port + " is " + state + " (physical state "
                + attr.physState() + "; " + hint + ")";
    }
}
