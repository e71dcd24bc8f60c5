package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.verbs.MemoryWindowType;

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
        return new JnaRegistration(pd.registerMemory(directBuffer, accessFlags));
    }

    @Override
    public MemoryWindow allocateWindow() {
        return new JnaMemoryWindow(pd.allocMemoryWindow(MemoryWindowType.TYPE_2));
    }

    @Override
    public void close() {
        pd.close();
    }
}
