package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An open RDMA device ({@code struct ibv_context}): queries, and the factory of protection domains,
 * completion channels and completion queues. Closing it closes everything created through it (QPs before
 * the CQs they use, then PDs ...) and then the device.
 *
 * <p>It also caches the provider's function pointers from {@code ibv_context->ops} ({@code post_send},
 * {@code post_recv}, {@code post_srq_recv}, {@code poll_cq}, {@code req_notify_cq}, memory window ops), read
 * once: those verbs are static inlines in verbs.h that no library exports. The data-path ones are called
 * through FFM downcalls on JDK 22+ (no JNI, no allocation), through libffi directly before
 * ({@code Native.ffi_call} with per-object argument frames: one JNI transition, no allocation), or through
 * cached JNA {@link Function}s with reused argument arrays when neither works ({@link Verbs#dataPathCalls()}).
 *
 * <p>{@link #borrow} wraps a context someone else owns (librdmacm's {@code cm_id->verbs}).
 */
public final class VerbsContext extends NativeResource {
    private final long address;
    private final Pointer pointer;
    private final String deviceName;
    private final boolean owned;

    final Function pollCq;
    final Function reqNotifyCq;
    final Function postSend;
    final Function postRecv;
    final Function postSrqRecv;
    final Function allocMw;
    final Function deallocMw;
    final Function bindMw;
    private final Function queryPortExtended;
    /** Addresses of the data-path ops, for {@link Downcalls}. */
    final long pollCqAddress;
    final long reqNotifyCqAddress;
    final long postSendAddress;
    final long postRecvAddress;
    final long postSrqRecvAddress;

    /** QPs, CQs and SRQs by address, to name the object of an async event. */
    private final ConcurrentHashMap<Long, NativeResource> objects = new ConcurrentHashMap<>();
    private final List<AsyncEvent> unacked = new ArrayList<>();

    VerbsContext(long address, String deviceName, boolean owned, String description) {
        super(description, null);
        LibIbverbs.load();
        this.address = address;
        this.pointer = new Pointer(address);
        this.deviceName = deviceName;
        this.owned = owned;
        this.pollCq = op(IbvStructs.IbvContext.OPS_POLL_CQ_OFFSET);
        this.reqNotifyCq = op(IbvStructs.IbvContext.OPS_REQ_NOTIFY_CQ_OFFSET);
        this.postSend = op(IbvStructs.IbvContext.OPS_POST_SEND_OFFSET);
        this.postRecv = op(IbvStructs.IbvContext.OPS_POST_RECV_OFFSET);
        this.postSrqRecv = op(IbvStructs.IbvContext.OPS_POST_SRQ_RECV_OFFSET);
        this.allocMw = op(IbvStructs.IbvContext.OPS_ALLOC_MW_OFFSET);
        this.deallocMw = op(IbvStructs.IbvContext.OPS_DEALLOC_MW_OFFSET);
        this.bindMw = op(IbvStructs.IbvContext.OPS_BIND_MW_OFFSET);
        this.queryPortExtended = extendedOp(IbvStructs.VerbsContextLayout.QUERY_PORT_OFFSET);
        this.pollCqAddress = pointer.getLong(IbvStructs.IbvContext.OPS_POLL_CQ_OFFSET);
        this.reqNotifyCqAddress = pointer.getLong(IbvStructs.IbvContext.OPS_REQ_NOTIFY_CQ_OFFSET);
        this.postSendAddress = pointer.getLong(IbvStructs.IbvContext.OPS_POST_SEND_OFFSET);
        this.postRecvAddress = pointer.getLong(IbvStructs.IbvContext.OPS_POST_RECV_OFFSET);
        this.postSrqRecvAddress = pointer.getLong(IbvStructs.IbvContext.OPS_POST_SRQ_RECV_OFFSET);
    }

    /**
     * Wraps an {@code ibv_context} owned by someone else, typically librdmacm ({@code rdma_cm_id->verbs}).
     * Closing the wrapper closes what was created through it but never calls {@code ibv_close_device}.
     *
     * @param ibvContext  the {@code struct ibv_context *}
     * @param description what it is, for messages (e.g. "ibv_context of rdma_cm_id 0x...")
     * @throws IllegalStateException when {@code -Dio.reactiverdma.verbs.downcalls} forces a calling mechanism
     *                               this JVM cannot use ({@link Verbs#dataPathCalls()})
     */
    public static VerbsContext borrow(Pointer ibvContext, String description) {
        return borrow(ibvContext, description, null);
    }

    /**
     * As {@link #borrow(Pointer, String)}; {@code onRelease} (null: none) runs once when the wrapper is closed,
     * for example to drop the reference that kept the context open meanwhile.
     */
    public static VerbsContext borrow(Pointer ibvContext, String description, Runnable onRelease) {
        Objects.requireNonNull(ibvContext, "ibvContext");
        Objects.requireNonNull(description, "description");
        Downcalls.requireUsable();
        io.reactiverdma.natives.RdmaNative.ensureLibraries();
        long ctx = Pointer.nativeValue(ibvContext);
        if (ctx == 0) {
            throw new IllegalArgumentException("ibvContext is NULL");
        }
        long dev = ibvContext.getLong(IbvStructs.IbvContext.DEVICE_OFFSET);
        String name = dev == 0 ? "?" : LibIbverbs.ibv_get_device_name(dev);
        VerbsContext c = new VerbsContext(ctx, name, false, description);
        c.onRelease = onRelease;
        return c;
    }

    private Function op(int offset) {
        Pointer fn = pointer.getPointer(offset);
        return fn == null ? null : Function.getFunction(fn);
    }

    /** A verbs_context op, or null when the provider's context is not extended or lacks it. */
    private Function extendedOp(int opOffset) {
        long abiCompat = pointer.getLong(IbvStructs.IbvContext.ABI_COMPAT_OFFSET);
        if (abiCompat != -1L) {
            return null;
        }
        long vctx = address - IbvStructs.VerbsContextLayout.CONTEXT_OFFSET;
        Pointer v = new Pointer(vctx);
        long sz = v.getLong(IbvStructs.VerbsContextLayout.SZ_OFFSET);
        if (sz < IbvStructs.VerbsContextLayout.SIZE - opOffset) {
            return null;
        }
        Pointer fn = v.getPointer(opOffset);
        return fn == null ? null : Function.getFunction(fn);
    }

    /** The {@code struct ibv_context *} address. */
    public long address() {
        return address;
    }

    /** The {@code struct ibv_context *} as a JNA pointer. */
    public Pointer pointer() {
        return pointer;
    }

    /** The device name, e.g. "rxe0". */
    public String deviceName() {
        return deviceName;
    }

    /** True for a context from {@link #borrow}. */
    public boolean isBorrowed() {
        return !owned;
    }

    /** The file descriptor async events arrive on (poll it for POLLIN). */
    /** What closing a borrowed context also does (drop the reference that kept it open), or null. */
    private volatile Runnable onRelease;
    private volatile boolean asyncNonBlocking;

    public int asyncFd() {
        beginCall();
        try {
            return pointer.getInt(IbvStructs.IbvContext.ASYNC_FD_OFFSET);
        } finally {
            endCall();
        }
    }

    /** Completion vectors available for {@link #createCompletionQueue}. */
    public int numCompVectors() {
        beginCall();
        try {
            return pointer.getInt(IbvStructs.IbvContext.NUM_COMP_VECTORS_OFFSET);
        } finally {
            endCall();
        }
    }

    // -------------------------------------------------------------------------------------------- queries
    /** {@code ibv_query_device}. */
    public DeviceAttributes queryDevice() {
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(DeviceAttributes.SIZE);
            Failures.check("ibv_query_device", LibIbverbs.ibv_query_device(address, Buffers.address(b)));
            DeviceAttributes a = DeviceAttributes.read(b, 0);
            Reference.reachabilityFence(b);
            return a;
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_query_port}, as verbs.h's inline does it: through the provider's
     * {@code verbs_context->query_port} with {@code sizeof(struct ibv_port_attr)}, or the exported compat
     * function with a zeroed struct when the provider has no extended context.
     *
     * @param port port number, from 1
     */
    public PortAttributes queryPort(int port) {
        checkPort(port);
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(PortAttributes.SIZE);
            long a = Buffers.address(b);
            int rc;
            if (queryPortExtended != null) {
                rc = queryPortExtended.invokeInt(new Object[] {pointer, (byte) port, new Pointer(a), (long) PortAttributes.SIZE});
            } else {
                rc = LibIbverbs.ibv_query_port(address, (byte) port, a);
            }
            if (rc != 0) {
                throw Failures.returned("ibv_query_port", rc, deviceName + " port " + port);
            }
            PortAttributes p = PortAttributes.read(b, 0);
            Reference.reachabilityFence(b);
            return p;
        } finally {
            endCall();
        }
    }

    /** {@code ibv_query_gid}: the GID at {@code index} of a port's table (all zero if the entry is empty). */
    public Gid queryGid(int port, int index) {
        checkPort(port);
        checkIndex("index", index);
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(Gid.SIZE);
            int rc = LibIbverbs.ibv_query_gid(address, (byte) port, index, Buffers.address(b));
            if (rc != 0) {
                throw Failures.returned("ibv_query_gid", rc, deviceName + " port " + port + " index " + index);
            }
            Gid g = Gid.read(b, 0);
            Reference.reachabilityFence(b);
            return g;
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_query_gid_ex}: one GID entry with its type. Empty entries fail with ENODATA. Without
     * _ibv_query_gid_ex (rdma-core before v32) the type is UNKNOWN.
     */
    public GidEntry queryGidEntry(int port, int index) {
        checkPort(port);
        checkIndex("index", index);
        beginCall();
        try {
            Function f = GidFunctions.QUERY_GID_EX;
            if (f == null) {
                return new GidEntry(queryGid(port, index), index, port, GidType.UNKNOWN, 0);
            }
            ByteBuffer b = Buffers.allocate(GidEntry.SIZE);
            int rc = f.invokeInt(new Object[] {pointer, port, index, new Pointer(Buffers.address(b)), 0, (long) GidEntry.SIZE});
            if (rc != 0) {
                throw Failures.returned("ibv_query_gid_ex", rc, deviceName + " port " + port + " index " + index);
            }
            GidEntry e = GidEntry.read(b, 0);
            Reference.reachabilityFence(b);
            return e;
        } finally {
            endCall();
        }
    }

    /**
     * The valid (non-empty) GID entries of one port, with their types ({@code ibv_query_gid_table}, or
     * ibv_query_gid over the table on an older rdma-core).
     */
    public List<GidEntry> queryGidTable(int port) {
        checkPort(port);
        int length = queryPort(port).gidTableLength();
        List<GidEntry> result = new ArrayList<>();
        Function f = GidFunctions.QUERY_GID_TABLE;
        if (f != null && length > 0) {
            // _ibv_query_gid_table covers all ports; size the array for every port of the device.
            int ports = Math.max(1, queryDevice().physPortCount());
            int max = length * ports;
            ByteBuffer b = Buffers.allocate(max * GidEntry.SIZE);
            long n = (Long) f.invoke(Long.class, new Object[] {pointer, new Pointer(Buffers.address(b)), (long) max, 0, (long) GidEntry.SIZE});
            if (n < 0) {
                throw Failures.returned("ibv_query_gid_table", (int) n, deviceName);
            }
            for (int i = 0; i < n; i++) {
                GidEntry e = GidEntry.read(b, i * GidEntry.SIZE);
                if (e.port() == port) {
                    result.add(e);
                }
            }
            Reference.reachabilityFence(b);
            return result;
        }
        for (int i = 0; i < length; i++) {
            Gid g = queryGid(port, i);
            if (!g.isZero()) {
                result.add(new GidEntry(g, i, port, GidType.UNKNOWN, 0));
            }
        }
        return result;
    }

    /**
     * The RoCEv2 GID entry of an IPv4 address on this port ({@code ::ffff:a.b.c.d}): what an address vector
     * needs as {@code sgid_index} to talk RoCEv2 over IPv4. The first such entry when several exist.
     */
    public Optional<GidEntry> findRoceV2Ipv4Gid(int port) {
        for (GidEntry e : queryGidTable(port)) {
            if (e.gid().isIpv4Mapped() && (e.type() == GidType.ROCE_V2 || e.type() == GidType.UNKNOWN)) {
                return Optional.of(e);
            }
        }
        return Optional.empty();
    }

    /** {@code ibv_query_pkey}: the P_Key at {@code index} in host order (0xffff = default full membership). */
    public int queryPkey(int port, int index) {
        checkPort(port);
        checkIndex("index", index);
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(2);
            int rc = LibIbverbs.ibv_query_pkey(address, (byte) port, index, Buffers.address(b));
            if (rc != 0) {
                throw Failures.returned("ibv_query_pkey", rc, deviceName + " port " + port + " index " + index);
            }
            int pkey = Buffers.getShortBE(b, 0);
            Reference.reachabilityFence(b);
            return pkey;
        } finally {
            endCall();
        }
    }

    // ------------------------------------------------------------------------------------------ factories
    /** {@code ibv_alloc_pd}. */
    public ProtectionDomain allocPd() {
        beginCall();
        try {
            long pd = LibIbverbs.ibv_alloc_pd(address);
            if (pd == 0) {
                throw new NativeCallException("ibv_alloc_pd", Native.getLastError(), deviceName);
            }
            return wrapOrDestroy(() -> new ProtectionDomain(this, pd, true), () -> LibIbverbs.ibv_dealloc_pd(pd));
        } finally {
            endCall();
        }
    }

    /** {@code ibv_create_comp_channel}: a file descriptor that CQ events arrive on. */
    public CompletionChannel createCompletionChannel() {
        beginCall();
        try {
            long ch = LibIbverbs.ibv_create_comp_channel(address);
            if (ch == 0) {
                throw new NativeCallException("ibv_create_comp_channel", Native.getLastError(), deviceName);
            }
            return wrapOrDestroy(() -> new CompletionChannel(this, ch), () -> LibIbverbs.ibv_destroy_comp_channel(ch));
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_create_cq}.
     *
     * @param size          minimum number of entries (the provider may round up: see
     *                      {@link CompletionQueue#capacity()})
     * @param channelOrNull completion channel for {@link CompletionQueue#requestNotify} events, or null
     * @param compVector    completion vector, 0..{@link #numCompVectors()}-1
     */
    public CompletionQueue createCompletionQueue(int size, CompletionChannel channelOrNull, int compVector) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, got " + size);
        }
        beginCall();
        try {
            if (compVector < 0 || compVector >= numCompVectors()) {
                throw new IllegalArgumentException("compVector must be 0.." + (numCompVectors() - 1) + ", got " + compVector);
            }
            long ch = 0;
            if (channelOrNull != null) {
                channelOrNull.ensureOpen();
                if (channelOrNull.context() != this) {
                    throw new IllegalArgumentException("channel belongs to another context: " + channelOrNull.context());
                }
                ch = channelOrNull.address();
            }
            long cq = LibIbverbs.ibv_create_cq(address, size, 0L, ch, compVector);
            if (cq == 0) {
                throw new NativeCallException("ibv_create_cq", Native.getLastError(), "size " + size + " on " + deviceName);
            }
            return wrapOrDestroy(() -> new CompletionQueue(this, cq, channelOrNull, true, "ibv_cq on " + deviceName),
                    () -> LibIbverbs.ibv_destroy_cq(cq));
        } finally {
            endCall();
        }
    }

    // -------------------------------------------------------------------------------------- async events
    /**
     * {@code ibv_get_async_event}: blocks until an async event arrives. Acknowledge it with
     * {@link #ackAsyncEvent}. Prefer {@link #getAsyncEvent(Duration)}, which cannot hang.
     */
    public AsyncEvent getAsyncEvent() {
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(AsyncEvent.SIZE);
            int rc = LibIbverbs.ibv_get_async_event(address, Buffers.address(b));
            if (rc != 0) {
                throw Failures.returned("ibv_get_async_event", rc, deviceName);
            }
            AsyncEvent e = AsyncEvent.read(b, objects::get);
            synchronized (unacked) {
                unacked.add(e);
            }
            Reference.reachabilityFence(b);
            return e;
        } finally {
            endCall();
        }
    }

    /**
     * The next async event if one is pending, else null, without blocking: the async fd is made O_NONBLOCK
     * on first use (as {@code man ibv_get_async_event}'s example does), so a reader woken by a poll that
     * another reader answered first returns instead of blocking until the next event.
     */
    public AsyncEvent pollAsyncEvent() {
        beginCall();
        try {
            if (!asyncNonBlocking) {
                Fds.setNonBlocking(pointer.getInt(IbvStructs.IbvContext.ASYNC_FD_OFFSET), true, "async event fd of " + deviceName);
                asyncNonBlocking = true;
            }
            ByteBuffer b = Buffers.allocate(AsyncEvent.SIZE);
            int rc = LibIbverbs.ibv_get_async_event(address, Buffers.address(b));
            if (rc != 0) {
                int errno = Native.getLastError();
                if (errno == io.reactiverdma.natives.Errno.EAGAIN) {
                    return null;
                }
                throw new NativeCallException("ibv_get_async_event", errno, deviceName);
            }
            AsyncEvent e = AsyncEvent.read(b, objects::get);
            synchronized (unacked) {
                unacked.add(e);
            }
            Reference.reachabilityFence(b);
            return e;
        } finally {
            endCall();
        }
    }

    /** Waits at most {@code timeout} for an async event (poll on the async fd); null when none arrived. */
    public AsyncEvent getAsyncEvent(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        beginCall();
        try {
            if (!Fds.awaitReadable(asyncFd(), timeout, "async event fd of " + deviceName)) {
                return null;
            }
            return getAsyncEvent();
        } finally {
            endCall();
        }
    }

    /** {@code ibv_ack_async_event}; acknowledging twice is harmless. */
    public void ackAsyncEvent(AsyncEvent event) {
        Objects.requireNonNull(event, "event");
        beginCall();
        try {
            synchronized (unacked) {
                if (!unacked.remove(event)) {
                    return;
                }
            }
            ack(event);
        } finally {
            endCall();
        }
    }

    private static void ack(AsyncEvent event) {
        if (!event.markAcked()) {
            return;
        }
        ByteBuffer b = Buffers.allocate(AsyncEvent.SIZE);
        event.writeTo(b);
        LibIbverbs.ibv_ack_async_event(Buffers.address(b));
        Reference.reachabilityFence(b);
    }

    /** Acknowledges pending events about the object at {@code element}: its destroy call would wait for them. */
    void ackEventsFor(long element) {
        List<AsyncEvent> mine = new ArrayList<>();
        synchronized (unacked) {
            for (Iterator<AsyncEvent> it = unacked.iterator(); it.hasNext(); ) {
                AsyncEvent e = it.next();
                if (e.elementAddress() == element) {
                    mine.add(e);
                    it.remove();
                }
            }
        }
        mine.forEach(VerbsContext::ack);
    }

    void register(long element, NativeResource r) {
        objects.put(element, r);
    }

    void unregister(long element) {
        objects.remove(element);
    }

    // --------------------------------------------------------------------------------------------- close
    @Override
    protected void release() {
        List<AsyncEvent> rest;
        synchronized (unacked) {
            rest = new ArrayList<>(unacked);
            unacked.clear();
        }
        rest.forEach(VerbsContext::ack);
        if (owned) {
            Failures.check("ibv_close_device", LibIbverbs.ibv_close_device(address));
        }
        Runnable r = onRelease;
        if (r != null) {
            r.run();
        }
    }

    static void checkPort(int port) {
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("port must be 1..255 (ports are numbered from 1), got " + port);
        }
    }

    private static void checkIndex(String name, int index) {
        if (index < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + index);
        }
    }

    /** Lazily resolved: rdma-core v32+ only. */
    private static final class GidFunctions {
        static final Function QUERY_GID_EX = LibIbverbs.optional("_ibv_query_gid_ex");
        static final Function QUERY_GID_TABLE = LibIbverbs.optional("_ibv_query_gid_table");
    }
}
