package io.reactiverdma.natives;

/** Finds an RDMA device with an ACTIVE port, for {@link RdmaNative#isAvailable()}. */
final class DeviceProbe {
    private DeviceProbe() {
    }

    /** Returns null when some device has an ACTIVE port, else the reason (no device, ports down ...). */
    static Throwable findActivePort() {
        // Replaced by the verbs bindings (ibv_get_device_list / ibv_query_port).
        return new RdmaUnavailableException("device probe not implemented yet");
    }
}
