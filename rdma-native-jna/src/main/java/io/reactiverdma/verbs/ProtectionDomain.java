package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A protection domain ({@code struct ibv_pd}): the scope of memory regions, memory windows, queue pairs,
 * shared receive queues and address handles, all of which are its children. Closing it closes them (newest
 * first; a QP also closes before any CQ/SRQ it uses) and then deallocates the PD.
 */
public final class ProtectionDomain extends NativeResource {
    private final VerbsContext context;
    private final long address;
    private final boolean owned;

    ProtectionDomain(VerbsContext context, long address, boolean owned) {
        super("ibv_pd on " + context.deviceName(), context);
        this.context = context;
        this.address = address;
        this.owned = owned;
    }

    /**
     * Wraps a PD allocated by someone else (e.g. librdmacm's {@code cm_id->pd}); closing the wrapper closes
     * its children but never deallocates the PD.
     */
    public static ProtectionDomain borrow(VerbsContext context, Pointer ibvPd) {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(ibvPd, "ibvPd");
        context.ensureOpen();
        return new ProtectionDomain(context, Pointer.nativeValue(ibvPd), false);
    }

    public VerbsContext context() {
        return context;
    }

    /** The {@code struct ibv_pd *}. */
    public long address() {
        return address;
    }

    public Pointer pointer() {
        return new Pointer(address);
    }

    // --------------------------------------------------------------------------------------------- memory
    /**
     * Registers the bytes of a direct buffer between its position and its limit. The buffer stays strongly
     * referenced by the region until it is closed ({@link MemoryRegion#buffer()}).
     *
     * @param access {@link AccessFlags} bits; REMOTE_WRITE and REMOTE_ATOMIC need LOCAL_WRITE
     * @throws IllegalArgumentException for a heap buffer or an empty range
     * @throws NativeCallException       when ibv_reg_mr fails; ENOMEM names the locked-memory limit
     */
    public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
        Objects.requireNonNull(buffer, "buffer");
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("buffer must be a direct ByteBuffer (ByteBuffer.allocateDirect): "
                    + "the HCA reads and writes it by address, and a heap buffer moves");
        }
        long base = Buffers.address(buffer);
        return register(base + buffer.position(), buffer.remaining(), access, buffer);
    }

    /**
     * Registers {@code length} bytes of native memory at {@code address} (memory the caller keeps valid and
     * frees only after the region is closed).
     */
    public MemoryRegion registerMemory(long address, long length, int access) {
        if (address == 0) {
            throw new IllegalArgumentException("address must not be 0");
        }
        return register(address, length, access, null);
    }

    private MemoryRegion register(long addr, long length, int access, Object keepAlive) {
        if (length <= 0) {
            throw new IllegalArgumentException("length must be > 0, got " + length);
        }
        AccessFlags.validate("access", access);
        beginCall();
        try {
            boolean optional = (access & AccessFlags.OPTIONAL_RANGE) != 0;
            long mr = optional ? RegMrIova2.call(address, addr, length, access)
                    : LibIbverbs.ibv_reg_mr(address, addr, length, access);
            if (mr == 0) {
                int errno = Native.getLastError();
                String detail = length + " bytes at 0x" + Long.toHexString(addr) + ", access " + AccessFlags.describe(access)
                        + ", on " + context.deviceName();
                if (errno == Errno.ENOMEM) {
                    detail += "; " + Failures.memlockHint();
                }
                throw new NativeCallException(optional ? "ibv_reg_mr_iova2" : "ibv_reg_mr", errno, detail);
            }
            return wrapOrDestroy(() -> new MemoryRegion(this, mr, keepAlive), () -> LibIbverbs.ibv_dereg_mr(mr));
        } finally {
            endCall();
        }
    }

    /** ibv_reg_mr_iova2 (rdma-core v29+), which verbs.h's ibv_reg_mr macro uses for optional access flags. */
    private static final class RegMrIova2 {
        static final Function FN = LibIbverbs.optional("ibv_reg_mr_iova2");

        static long call(long pd, long addr, long length, int access) {
            if (FN == null) {
                return LibIbverbs.ibv_reg_mr(pd, addr, length, access & ~AccessFlags.OPTIONAL_RANGE);
            }
            Object r = FN.invoke(Pointer.class, new Object[] {new Pointer(pd), new Pointer(addr), length, addr, access});
            return r == null ? 0L : Pointer.nativeValue((Pointer) r);
        }
    }

    /**
     * Allocates a memory window ({@code ibv_alloc_mw}, through the provider's {@code ops.alloc_mw}).
     *
     * @throws NativeCallException EOPNOTSUPP when the provider has no memory windows
     */
    public MemoryWindow allocMemoryWindow(MemoryWindowType type) {
        Objects.requireNonNull(type, "type");
        beginCall();
        try {
            if (context.allocMw == null) {
                throw new NativeCallException("ibv_alloc_mw", Errno.EOPNOTSUPP, context.deviceName() + " has no memory windows");
            }
            Pointer mw = (Pointer) context.allocMw.invoke(Pointer.class, new Object[] {pointer(), type.value()});
            if (mw == null) {
                throw new NativeCallException("ibv_alloc_mw", Native.getLastError(), type + " on " + context.deviceName());
            }
            return wrapOrDestroy(() -> new MemoryWindow(this, Pointer.nativeValue(mw), type),
                    () -> context.deallocMw.invokeInt(new Object[] {mw}));
        } finally {
            endCall();
        }
    }

    // ----------------------------------------------------------------------------------------- queues
    /**
     * {@code ibv_create_qp}. The granted sizes (possibly larger) are in {@link QueuePair#capabilities()}.
     *
     * @throws NullPointerException when a CQ is missing
     */
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        attributes.validate();
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(QpInitAttributes.SIZE);
            attributes.writeTo(b, 0);
            long qp = LibIbverbs.ibv_create_qp(address, Buffers.address(b));
            if (qp == 0) {
                throw new NativeCallException("ibv_create_qp", Native.getLastError(), attributes + " on " + context.deviceName());
            }
            QpCapabilities granted = QpCapabilities.read(b, QpInitAttributes.CAP_OFFSET);
            Reference.reachabilityFence(b);
            return wrapOrDestroy(() -> new QueuePair(this, qp, attributes.sendCq(), attributes.recvCq(), attributes.srq(), granted,
                    null, null), () -> LibIbverbs.ibv_destroy_qp(qp));
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_create_srq}.
     *
     * @param maxWr    receive work requests it holds
     * @param maxSge   scatter entries per work request
     * @param srqLimit limit to arm at once (0 = none); see {@link SharedReceiveQueue#armLimit}
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge, int srqLimit) {
        SrqAttributes requested = new SrqAttributes(maxWr, maxSge, srqLimit);
        if (maxWr < 1) {
            throw new IllegalArgumentException("maxWr must be >= 1, got " + maxWr);
        }
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(IbvStructs.IbvSrqInitAttr.SIZE);
            requested.writeTo(b, IbvStructs.IbvSrqInitAttr.ATTR_OFFSET);
            long srq = LibIbverbs.ibv_create_srq(address, Buffers.address(b));
            if (srq == 0) {
                throw new NativeCallException("ibv_create_srq", Native.getLastError(), requested + " on " + context.deviceName());
            }
            SrqAttributes granted = SrqAttributes.read(b, IbvStructs.IbvSrqInitAttr.ATTR_OFFSET);
            Reference.reachabilityFence(b);
            return wrapOrDestroy(() -> new SharedReceiveQueue(this, srq, granted), () -> LibIbverbs.ibv_destroy_srq(srq));
        } finally {
            endCall();
        }
    }

    /** {@code ibv_create_ah}: a destination for UD sends. */
    public AddressHandle createAddressHandle(AddressHandleAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(AddressHandleAttributes.SIZE);
            attributes.writeTo(b, 0);
            long ah = LibIbverbs.ibv_create_ah(address, Buffers.address(b));
            if (ah == 0) {
                throw new NativeCallException("ibv_create_ah", Native.getLastError(), attributes + " on " + context.deviceName());
            }
            Reference.reachabilityFence(b);
            return wrapOrDestroy(() -> new AddressHandle(this, ah, attributes.copy()), () -> LibIbverbs.ibv_destroy_ah(ah));
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_create_ah_from_wc}: an address handle that answers the sender of a UD receive.
     *
     * @param wcs   the completions holding the receive
     * @param index which completion
     * @param grh   the receive buffer's first 40 bytes (the GRH), as native memory
     * @param port  the port it arrived on
     */
    public AddressHandle createAddressHandleFromWc(WorkCompletions wcs, int index, long grh, int port) {
        Objects.requireNonNull(wcs, "wcs");
        VerbsContext.checkPort(port);
        beginCall();
        try {
            long ah = LibIbverbs.ibv_create_ah_from_wc(address, wcs.address(index), grh, (byte) port);
            if (ah == 0) {
                throw new NativeCallException("ibv_create_ah_from_wc", Native.getLastError(), context.deviceName());
            }
            Reference.reachabilityFence(wcs);
            return wrapOrDestroy(() -> new AddressHandle(this, ah, null), () -> LibIbverbs.ibv_destroy_ah(ah));
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_create_ah_from_wc} for a datagram whose completion is no longer at hand: the address handle
     * that answers the sender whose QP is {@code sourceQpn}, from the GRH the device wrote at {@code grh}.
     */
    public AddressHandle createAddressHandleFromGrh(long grh, int sourceQpn, int port) {
        WorkCompletions wc = new WorkCompletions(1);
        wc.buffer().putInt(WorkCompletions.SRC_QP_OFFSET, sourceQpn);
        wc.buffer().putInt(WorkCompletions.WC_FLAGS_OFFSET, WcFlags.GRH);
        wc.count(1);
        return createAddressHandleFromWc(wc, 0, grh, port);
    }

    @Override
    protected void release() {
        if (owned) {
            Failures.check("ibv_dealloc_pd", LibIbverbs.ibv_dealloc_pd(address));
        }
    }
}
