package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.MemoryRegion;

import java.nio.ByteBuffer;

final class JnaProtectionDomain implements ProtectionDomain {
    final io.reactiverdma.verbs.ProtectionDomain pd;

    private final JnaDevice device;

    JnaProtectionDomain(io.reactiverdma.verbs.ProtectionDomain pd, JnaDevice device) {
        this.pd = pd;
        this.device = device;
    }

    @Override
    public io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue createSharedReceiveQueue(int maxWr) {
        return device.track(pd.createSharedReceiveQueue(maxWr, 1, 0));
    }

    @Override
    public Registration register(ByteBuffer directBuffer, int accessFlags) {
        MemoryRegion mr = pd.registerMemory(directBuffer, accessFlags);
        return new Registration() {
            @Override
            public long address() {
                return mr.address();
            }

            @Override
            public int lkey() {
                return mr.lkey();
            }

            @Override
            public int rkey() {
                return mr.rkey();
            }

            @Override
            public void deregister() {
                mr.close();
            }
        };
    }

    @Override
    public void close() {
        pd.close();
    }
}
