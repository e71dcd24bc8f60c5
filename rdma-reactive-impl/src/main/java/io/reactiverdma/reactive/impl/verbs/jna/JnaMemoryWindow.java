package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.Verbs;
import io.reactiverdma.verbs.WrOpcode;

/**
 * A type 2 {@code ibv_mw}. Its rkey is tracked here: a type 2 bind sets the rkey the work request names, and
 * the provider does not write it back into {@code struct ibv_mw}.
 */
final class JnaMemoryWindow implements MemoryWindow {
    private final io.reactiverdma.verbs.MemoryWindow mw;
    private volatile int rkey;

    JnaMemoryWindow(io.reactiverdma.verbs.MemoryWindow mw) {
        this.mw = mw;
        this.rkey = mw.rkey();
    }

    @Override
    public int nextRkey() {
        return Verbs.incRkey(rkey);
    }

    @Override
    public int writeBind(SendWorkRequests wr, long wrId, Registration region, long address, int length, int access) {
        int next = nextRkey();
        int i = wr.add(wrId, WrOpcode.BIND_MW, SendFlags.SIGNALED);
        wr.bindMw(i, mw, next, ((JnaRegistration) region).mr, address, length, access);
        rkey = next;
        return next;
    }

    @Override
    public void writeInvalidate(SendWorkRequests wr, long wrId) {
        int i = wr.add(wrId, WrOpcode.LOCAL_INV, SendFlags.SIGNALED);
        wr.invalidateRkey(i, rkey);
    }

    @Override
    public void deallocate() {
        mw.close();
    }
}
