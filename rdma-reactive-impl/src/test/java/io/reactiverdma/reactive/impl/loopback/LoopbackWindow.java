package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

/**
 * A type 2 memory window as rxe has them: its rkey is a 24-bit index and an 8-bit key; a BIND_MW work request
 * (executed by the wire in send-queue order) binds it to a range of a registration of its protection domain
 * that allows MW_BIND, for the QP that posted it, under a new rkey with the same index; it must be invalid
 * (never bound, or invalidated) to be bound. Remote requests through it are accepted only from that QP's peer
 * (they arrive on that QP), within the range and the access granted. LOCAL_INV, destroying the QP or
 * deallocating the window invalidate it. The wire thread reads its state under the fabric lock.
 */
public final class LoopbackWindow implements MemoryWindow {
    private final LoopbackStack stack;
    final LoopbackProtectionDomain pd;
    /** What a BIND_MW work request names the window by (the {@code struct ibv_mw *} on a real stack). */
    final long handle;
    // ---- fabric lock
    int rkey;
    /** The rkey the next bind gives (tracked by the caller, like ibv_inc_rkey on a real stack). */
    private int nextBindRkey;
    boolean deallocated;
    LoopbackQueuePair boundQp;
    LoopbackRegistration region;
    long address;
    long length;
    int access;

    LoopbackWindow(LoopbackStack stack, LoopbackProtectionDomain pd, long handle, int rkey) {
        this.stack = stack;
        this.pd = pd;
        this.handle = handle;
        this.rkey = rkey;
        this.nextBindRkey = rkey;
    }

    @Override
    public int nextRkey() {
        synchronized (stack.lock) {
            return (nextBindRkey & ~0xff) | ((nextBindRkey + 1) & 0xff);
        }
    }

    @Override
    public int writeBind(SendWorkRequests wr, long wrId, Registration region, long address, int length, int access) {
        int next = nextRkey();
        int i = wr.add(wrId, WrOpcode.BIND_MW, SendFlags.SIGNALED);
        java.nio.ByteBuffer b = wr.buffer();
        int at = (int) (wr.address(i) - wr.address());
        b.putLong(at + SendWorkRequests.BIND_MW_MW_OFFSET, handle);
        b.putInt(at + SendWorkRequests.BIND_MW_RKEY_OFFSET, next);
        b.putLong(at + SendWorkRequests.BIND_MW_MR_OFFSET, region.address()); // the loopback's MR handle
        b.putLong(at + SendWorkRequests.BIND_MW_ADDR_OFFSET, address);
        b.putLong(at + SendWorkRequests.BIND_MW_LENGTH_OFFSET, length);
        b.putInt(at + SendWorkRequests.BIND_MW_ACCESS_FLAGS_OFFSET, access);
        synchronized (stack.lock) {
            nextBindRkey = next;
        }
        return next;
    }

    @Override
    public void writeInvalidate(SendWorkRequests wr, long wrId) {
        int i = wr.add(wrId, WrOpcode.LOCAL_INV, SendFlags.SIGNALED);
        synchronized (stack.lock) {
            wr.invalidateRkey(i, nextBindRkey);
        }
    }

    /** The bound range is invalid from now on. Fabric lock held. */
    void invalidate() {
        boundQp = null;
        region = null;
    }

    boolean isBound() {
        return boundQp != null;
    }

    @Override
    public void deallocate() {
        synchronized (stack.lock) {
            if (deallocated) {
                return;
            }
            deallocated = true;
            invalidate();
            stack.memory.removeWindow(this);
            pd.windows.remove(this);
        }
        pd.device.resources.remove(LoopbackResources.Kind.MEMORY_WINDOW, this);
    }

    @Override
    public String toString() {
        return "mw[rkey 0x" + Integer.toHexString(rkey) + "]";
    }
}
