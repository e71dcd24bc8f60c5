package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.natives.RdmaNative;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import io.reactiverdma.verbs.VerbsContext;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** rdma-core's libibverbs and librdmacm, through rdma-native-jna. */
public final class JnaRdmaStack implements RdmaStack {
    /** One wrapper per device context, so the engine's per-device state has one key. */
    private final Map<Long, JnaDevice> devices = new ConcurrentHashMap<>();

    @Override
    public void ensureAvailable() {
        try {
            RdmaNative.ensureAvailability();
        } catch (RuntimeException e) {
            throw new RdmaException("RDMA is not usable here: " + e.getMessage(), e);
        }
    }

    @Override
    public CmChannel openCmChannel() {
        return new JnaCmChannel(this);
    }

    @Override
    public java.util.List<JnaDevice> devices() {
        return io.reactiverdma.cm.RdmaCmId.devices().stream().map(this::device).toList();
    }

    JnaDevice device(VerbsContext context) {
        return devices.compute(context.address(), (k, d) -> d != null && d.context == context ? d : new JnaDevice(context));
    }

    /**
     * Closes the engine's wrapper of the removed device's context (dropping the reference it held in
     * librdmacm) and lists the devices, which makes librdmacm close a context of a device that is gone and no
     * longer referred to ({@link io.reactiverdma.cm.RdmaCmId#listedDeviceNames()}).
     */
    @Override
    public boolean releaseRemoved(io.reactiverdma.reactive.impl.verbs.Device device) {
        if (device instanceof JnaDevice d) {
            devices.remove(d.key(), d);
            d.context.close();
        }
        return !io.reactiverdma.cm.RdmaCmId.listedDeviceNames().contains(device.name());
    }

    @Override
    public String name() {
        return "rdma-core";
    }
}
