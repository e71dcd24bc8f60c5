package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeResource;

import java.nio.ByteBuffer;

/**
 * Registered memory ({@code struct ibv_mr}): the HCA may access it with the {@link #lkey()} locally and,
 * if access allows, remotely with the {@link #rkey()}. Closing deregisters it ({@code ibv_dereg_mr});
 * memory windows bound to it are closed first.
 */
public final class MemoryRegion extends NativeResource {
    private final ProtectionDomain pd;
    private final long handle;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;
    private final Object keepAlive;
    final Dependents boundWindows = new Dependents(this);

    MemoryRegion(ProtectionDomain pd, long handle, Object keepAlive) {
        super(describe(pd, handle), pd);
        this.pd = pd;
        this.handle = handle;
        Pointer p = new Pointer(handle);
        this.address = p.getLong(IbvStructs.IbvMr.ADDR_OFFSET);
        this.length = p.getLong(IbvStructs.IbvMr.LENGTH_OFFSET);
        this.lkey = p.getInt(IbvStructs.IbvMr.LKEY_OFFSET);
        this.rkey = p.getInt(IbvStructs.IbvMr.RKEY_OFFSET);
        this.keepAlive = keepAlive;
    }

    private static String describe(ProtectionDomain pd, long handle) {
        Pointer p = new Pointer(handle);
        return "ibv_mr of " + p.getLong(IbvStructs.IbvMr.LENGTH_OFFSET) + " bytes on " + pd.context().deviceName();
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** Start of the registered range (a virtual address). */
    public long address() {
        return address;
    }

    public long length() {
        return length;
    }

    /** Local key, for SGEs. */
    public int lkey() {
        return lkey;
    }

    /** Remote key, for the peer's RDMA READ/WRITE/atomics. */
    public int rkey() {
        return rkey;
    }

    /** The registered direct buffer (null when registered by address). */
    public ByteBuffer buffer() {
        return keepAlive instanceof ByteBuffer b ? b : null;
    }

    /** The {@code struct ibv_mr *}. */
    public long handleAddress() {
        return handle;
    }

    /** Throws IndexOutOfBoundsException unless [offset, offset+length) lies inside the region. */
    void checkRange(long offset, long len) {
        if (offset < 0 || len < 0 || offset + len > length) {
            throw new IndexOutOfBoundsException("range [" + offset + ", " + (offset + len) + ") outside the "
                    + length + "-byte memory region");
        }
    }

    @Override
    protected void release() {
        boundWindows.closeAll();
        Failures.check("ibv_dereg_mr", LibIbverbs.ibv_dereg_mr(handle));
    }

    @Override
    public String toString() {
        return super.toString() + " [addr 0x" + Long.toHexString(address) + ", lkey 0x" + Integer.toHexString(lkey)
                + ", rkey 0x" + Integer.toHexString(rkey) + "]";
    }
}
