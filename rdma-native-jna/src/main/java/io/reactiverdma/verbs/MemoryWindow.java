package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A memory window ({@code struct ibv_mw}): a remotely accessible window onto part of a memory region, with
 * its own rkey, that can be moved or revoked without re-registering. Type 1 windows are bound with
 * {@link #bind} ({@code ibv_bind_mw}); type 2 with a {@link WrOpcode#BIND_MW} work request
 * ({@link SendWorkRequests#bindMw}). The MR must be registered with {@link AccessFlags#MW_BIND}. Closing
 * deallocates it ({@code ibv_dealloc_mw}).
 */
public final class MemoryWindow extends NativeResource {
    private final ProtectionDomain pd;
    private final long address;
    private final Pointer pointer;
    private final MemoryWindowType type;
    private volatile MemoryRegion boundTo;

    MemoryWindow(ProtectionDomain pd, long address, MemoryWindowType type) {
        super("ibv_mw (" + type + ") on " + pd.context().deviceName(), pd);
        this.pd = pd;
        this.address = address;
        this.pointer = new Pointer(address);
        this.type = type;
    }

    public MemoryWindowType type() {
        return type;
    }

    /** The {@code struct ibv_mw *}. */
    public long address() {
        return address;
    }

    /** The current rkey (changes with every bind). */
    public int rkey() {
        beginCall();
        try {
            return pointer.getInt(IbvStructs.IbvMw.RKEY_OFFSET);
        } finally {
            endCall();
        }
    }

    /**
     * Binds a type 1 window to {@code [addr, addr+length)} of a region ({@code ibv_bind_mw}, through the
     * provider's {@code ops.bind_mw}): posts a bind work request on {@code qp}'s send queue; with
     * {@link SendFlags#SIGNALED} it completes with opcode {@link WcOpcode#BIND_MW}. Returns the window's new
     * rkey, usable once the bind completed.
     *
     * @param access REMOTE_READ / REMOTE_WRITE / REMOTE_ATOMIC bits the window grants
     * @throws NativeCallException EOPNOTSUPP when the provider cannot bind type 1 windows
     */
    public int bind(QueuePair qp, MemoryRegion mr, long addr, long length, int access, long wrId, int sendFlags) {
        Objects.requireNonNull(qp, "qp");
        Objects.requireNonNull(mr, "mr");
        if (type != MemoryWindowType.TYPE_1) {
            throw new IllegalArgumentException("bind() binds type 1 windows; bind a type 2 window with a BIND_MW "
                    + "work request (SendWorkRequests.bindMw)");
        }
        if (mr.protectionDomain() != pd) {
            throw new IllegalArgumentException("mr belongs to another protection domain than the window");
        }
        if (length < 0 || addr < mr.address() || addr + length > mr.address() + mr.length()) {
            throw new IndexOutOfBoundsException("window [0x" + Long.toHexString(addr) + ", +" + length
                    + ") is not inside the memory region " + mr);
        }
        beginCall();
        try {
            qp.ensureOpen();
            mr.ensureOpen();
            VerbsContext ctx = pd.context();
            if (ctx.bindMw == null) {
                throw new NativeCallException("ibv_bind_mw", Errno.EOPNOTSUPP, ctx.deviceName() + " has no bind_mw");
            }
            ByteBuffer b = Buffers.allocate(IbvStructs.IbvMwBind.SIZE);
            b.putLong(IbvStructs.IbvMwBind.WR_ID_OFFSET, wrId);
            b.putInt(IbvStructs.IbvMwBind.SEND_FLAGS_OFFSET, sendFlags);
            b.putLong(IbvStructs.IbvMwBind.BIND_INFO_MR_OFFSET, mr.handleAddress());
            b.putLong(IbvStructs.IbvMwBind.BIND_INFO_ADDR_OFFSET, addr);
            b.putLong(IbvStructs.IbvMwBind.BIND_INFO_LENGTH_OFFSET, length);
            b.putInt(IbvStructs.IbvMwBind.BIND_INFO_MW_ACCESS_FLAGS_OFFSET, access);
            int rc = ctx.bindMw.invokeInt(new Object[] {qp.pointer(), pointer, new Pointer(Buffers.address(b))});
            Reference.reachabilityFence(b);
            if (rc != 0) {
                throw Failures.returned("ibv_bind_mw", rc, this + " to " + mr);
            }
            bindingTo(mr);
            return pointer.getInt(IbvStructs.IbvMw.RKEY_OFFSET);
        } finally {
            endCall();
        }
    }

    /**
     * Lists this window under {@code mr}, whose close then deallocates it first: ibv_dereg_mr fails (EINVAL
     * on rxe) while a window is bound to the region. For type 2 windows, called when the BIND_MW is built
     * (whether or not it completes: deallocating an unbound window is harmless).
     */
    synchronized void bindingTo(MemoryRegion mr) {
        MemoryRegion previous = boundTo;
        if (previous != null && previous != mr) {
            previous.boundWindows.remove(this);
        }
        boundTo = mr;
        mr.boundWindows.add(this);
    }

    @Override
    protected void release() {
        MemoryRegion mr = boundTo;
        if (mr != null) {
            mr.boundWindows.remove(this);
        }
        VerbsContext ctx = pd.context();
        if (ctx.deallocMw == null) {
            throw new NativeCallException("ibv_dealloc_mw", Errno.EOPNOTSUPP, ctx.deviceName());
        }
        Failures.check("ibv_dealloc_mw", ctx.deallocMw.invokeInt(new Object[] {pointer}));
    }
}
