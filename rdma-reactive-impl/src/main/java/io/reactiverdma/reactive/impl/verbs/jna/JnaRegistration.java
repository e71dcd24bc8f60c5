package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.MemoryRegion;

/** An {@code ibv_mr}; its windows name it by its handle. */
final class JnaRegistration implements Registration {
    final MemoryRegion mr;

    JnaRegistration(MemoryRegion mr) {
        this.mr = mr;
    }

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
}
