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

    @Override
    public String name() {
        return "rdma-core";
    }
}
