package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.MemoryRegion;

import java.nio.ByteBuffer;

final class JnaProtectionDomain implements ProtectionDomain {
    final io.reactiverdma.verbs.ProtectionDomain pd;

    JnaProtectionDomain(io.reactiverdma.verbs.ProtectionDomain pd) {
        this.pd = pd;
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
