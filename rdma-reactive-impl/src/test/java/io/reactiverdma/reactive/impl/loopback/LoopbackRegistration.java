package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One registration: a fake address range over a direct buffer. The device reads and writes the buffer by
 * absolute index; after {@link #deregister()} (which waits for a copy in progress, under the fabric lock) it
 * never touches it again and its keys fail.
 */
public final class LoopbackRegistration implements Registration {
    private final LoopbackStack stack;
    final LoopbackProtectionDomain pd;
    private final ByteBuffer buffer;
    private final long address;
    private final int lkey;
    private final int rkey;
    final int access;
    private boolean deregistered; // fabric lock

    LoopbackRegistration(LoopbackStack stack, LoopbackProtectionDomain pd, ByteBuffer buffer, long address, int lkey,
            int rkey, int access) {
        this.stack = stack;
        this.pd = pd;
        this.buffer = buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).clear();
        this.address = address;
        this.lkey = lkey;
        this.rkey = rkey;
        this.access = access;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int lkey() {
        return lkey;
    }

    @Override
    public int rkey() {
        return rkey;
    }

    public int length() {
        return buffer.capacity();
    }

    public int accessFlags() {
        return access;
    }

    @Override
    public void deregister() {
        synchronized (stack.lock) {
            if (deregistered) {
                return;
            }
            if (stack.memory.hasWindowsOn(this)) {
                // rxe: ibv_dereg_mr of a region a memory window is bound to fails with EINVAL
                throw Errnos.fail("ibv_dereg_mr", Errnos.EINVAL, this + " has memory windows bound to it");
            }
            deregistered = true;
            stack.memory.remove(this);
            pd.registrations.remove(this);
        }
        pd.device.resources.remove(LoopbackResources.Kind.REGISTRATION, this);
        pd.device.resources.bytes(-length());
    }

    /** Copies out [addr, addr+len). Fabric lock held, range checked. */
    byte[] read(long addr, int len) {
        byte[] b = new byte[len];
        buffer.get((int) (addr - address), b, 0, len);
        return b;
    }

    /** Copies {@code len} bytes of {@code data} in at addr. Fabric lock held, range checked. */
    void write(long addr, byte[] data, int len) {
        buffer.put((int) (addr - address), data, 0, len);
    }

    /**
     * Copies [addr, addr+len) of this registration to {@code to} at {@code toAddr}: one memory copy, no
     * intermediate array (the zero-cost path; ranges checked, no lock).
     */
    void copyTo(long addr, LoopbackRegistration to, long toAddr, int len) {
        to.buffer.put((int) (toAddr - to.address), buffer, (int) (addr - address), len);
    }

    /** Whether [addr, addr+len) lies in this registration. */
    boolean contains(long addr, long len) {
        return len >= 0 && addr >= address && addr + len <= address + buffer.capacity();
    }

    /** A little-endian 64-bit word (as x86 atomics see memory). Fabric lock held, range checked. */
    long getLong(long addr) {
        return buffer.getLong((int) (addr - address));
    }

    void putLong(long addr, long value) {
        buffer.putLong((int) (addr - address), value);
    }

    /** The registered buffer as the application sees it (big-endian view of the same memory), for tests. */
    ByteBuffer bufferForTests() {
        return buffer.duplicate().order(ByteOrder.BIG_ENDIAN).clear();
    }

    @Override
    public String toString() {
        return "mr[0x" + Long.toHexString(address) + "+" + length() + " lkey 0x" + Integer.toHexString(lkey)
                + " rkey 0x" + Integer.toHexString(rkey) + " " + AccessFlags.describe(access) + "]";
    }
}
