package io.reactiverdma.verbs;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.RdmaNative;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An RDMA device as {@code ibv_get_device_list} reports it: name, GUID, node type. A snapshot (immutable,
 * holds no native memory): {@link #open()} looks the device up again by name, so a {@code VerbsDevice} stays
 * valid after the list it came from was freed, as libibverbs requires.
 */
public final class VerbsDevice {
    private static final int ENOSYS = 38;

    private final String name;
    private final long guid;
    private final NodeType nodeType;
    private final int transportType;
    private final String uverbsName;

    private VerbsDevice(String name, long guid, NodeType nodeType, int transportType, String uverbsName) {
        this.name = name;
        this.guid = guid;
        this.nodeType = nodeType;
        this.transportType = transportType;
        this.uverbsName = uverbsName;
    }

    /**
     * The RDMA devices present, in libibverbs' order (empty when the kernel has RDMA support but no device).
     *
     * @throws NativeCallException when ibv_get_device_list fails; ENOSYS means the kernel's RDMA user-space
     *                             interface (ib_uverbs) is missing, so no device can exist
     * @throws io.reactiverdma.natives.RdmaUnavailableException when libibverbs is not installed
     */
    public static List<VerbsDevice> list() {
        List<VerbsDevice> result = new ArrayList<>();
        withList((dev, unused) -> {
            result.add(snapshot(dev));
            return false;
        });
        return List.copyOf(result);
    }

    /** The device with this name (e.g. "rxe0"), if present. */
    public static Optional<VerbsDevice> byName(String name) {
        Objects.requireNonNull(name, "name");
        return list().stream().filter(d -> d.name.equals(name)).findFirst();
    }

    /**
     * Opens a device: the one named, or the first one when {@code nameOrNull} is null.
     *
     * @throws IllegalArgumentException when no device has that name (the message lists those present)
     * @throws NativeCallException      when listing or opening fails
     * @throws IllegalStateException    when {@code -Dio.reactiverdma.verbs.downcalls} forces a calling
     *                                  mechanism this JVM cannot use (checked before anything is opened)
     */
    public static VerbsContext open(String nameOrNull) {
        Downcalls.requireUsable();
        VerbsContext[] opened = new VerbsContext[1];
        List<String> seen = new ArrayList<>();
        withList((dev, unused) -> {
            String n = LibIbverbs.ibv_get_device_name(dev);
            seen.add(n);
            if (nameOrNull == null || nameOrNull.equals(n)) {
                long ctx = LibIbverbs.ibv_open_device(dev);
                if (ctx == 0) {
                    throw new NativeCallException("ibv_open_device", Native.getLastError(), "device " + n);
                }
                opened[0] = new VerbsContext(ctx, n, true, "ibv_context " + n);
                return true;
            }
            return false;
        });
        if (opened[0] == null) {
            throw new IllegalArgumentException(nameOrNull == null ? "no RDMA device found"
                    : "no RDMA device named " + nameOrNull + " (present: " + (seen.isEmpty() ? "none" : String.join(", ", seen)) + ")");
        }
        return opened[0];
    }

    /** Opens this device ({@code ibv_open_device}). */
    public VerbsContext open() {
        return open(name);
    }

    /** The kernel device name, e.g. "rxe0" or "mlx5_0". */
    public String name() {
        return name;
    }

    /** The node GUID in host order (0 for devices that have none). */
    public long guid() {
        return guid;
    }

    /** The GUID as ibv_devices prints it: "5cd4:c6ff:fe62:be40". */
    public String guidString() {
        return formatGuid(guid);
    }

    public NodeType nodeType() {
        return nodeType;
    }

    /** {@code enum ibv_transport_type}: 0 InfiniBand (also RoCE), 1 iWARP ... */
    public int transportType() {
        return transportType;
    }

    /** The uverbs character device, e.g. "uverbs0". */
    public String uverbsName() {
        return uverbsName;
    }

    /** "xxxx:xxxx:xxxx:xxxx" of a host-order GUID. */
    public static String formatGuid(long guid) {
        String hex = String.format("%016x", guid);
        return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":" + hex.substring(12);
    }

    @Override
    public String toString() {
        return name + " (guid " + guidString() + ", " + nodeType + ")";
    }

    private static VerbsDevice snapshot(long dev) {
        Pointer p = new Pointer(dev);
        String n = LibIbverbs.ibv_get_device_name(dev);
        long guid = Buffers.be64ToHost(LibIbverbs.ibv_get_device_guid(dev));
        NodeType type = NodeType.of(p.getInt(IbvStructs.IbvDevice.NODE_TYPE_OFFSET));
        int transport = p.getInt(IbvStructs.IbvDevice.TRANSPORT_TYPE_OFFSET);
        String uverbs = p.getString(IbvStructs.IbvDevice.DEV_NAME_OFFSET);
        return new VerbsDevice(n, guid, type, transport, uverbs);
    }

    private interface Visitor {
        /** Returns true to stop. */
        boolean visit(long device, int index);
    }

    private static void withList(Visitor visitor) {
        RdmaNative.ensureLibraries(); // a clean RdmaUnavailableException, not an ExceptionInInitializerError
        int[] num = new int[1];
        long list = LibIbverbs.ibv_get_device_list(num);
        if (list == 0) {
            int errno = Native.getLastError();
            throw new NativeCallException("ibv_get_device_list", errno, errno == ENOSYS
                    ? "the kernel's RDMA user-space interface is missing (no /sys/class/infiniband_verbs: ib_uverbs "
                    + "not loaded or no RDMA support), so no RDMA device can be present"
                    : null);
        }
        try {
            Pointer p = new Pointer(list);
            for (int i = 0; i < num[0]; i++) {
                long dev = Pointer.nativeValue(p.getPointer((long) i * Native.POINTER_SIZE));
                if (dev == 0 || visitor.visit(dev, i)) {
                    break;
                }
            }
        } finally {
            LibIbverbs.ibv_free_device_list(list);
        }
    }
}
