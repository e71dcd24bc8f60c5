package io.reactiverdma.cm;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;
import io.reactiverdma.verbs.CompletionQueue;
import io.reactiverdma.verbs.IbvStructs;
import io.reactiverdma.verbs.LibIbverbs;
import io.reactiverdma.verbs.ProtectionDomain;
import io.reactiverdma.verbs.QpInitAttributes;
import io.reactiverdma.verbs.QueuePair;
import io.reactiverdma.verbs.VerbsContext;

import java.lang.ref.Reference;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An rdma_cm identifier ({@code struct rdma_cm_id}), the rdma_cm counterpart of a socket. Every call is
 * asynchronous in librdmacm's sense: it starts an operation whose outcome arrives as a {@link CmEvent} on
 * the id's {@link EventChannel} (ADDR_RESOLVED, ROUTE_RESOLVED, ESTABLISHED, REJECTED ...).
 *
 * <p>Active side: {@link #resolveAddress} → ADDR_RESOLVED → {@link #resolveRoute} → ROUTE_RESOLVED →
 * {@link #createQueuePair} → {@link #connect} → ESTABLISHED (or REJECTED / UNREACHABLE / CONNECT_ERROR).
 * Passive side: {@link #bind} → {@link #listen} → CONNECT_REQUEST carrying a new id →
 * {@link #createQueuePair} on it → {@link #accept} (or {@link #reject}) → ESTABLISHED.
 *
 * <p>Closing destroys the QP created on it first, then the id ({@code rdma_destroy_id}); closing twice is
 * harmless; any call after close throws {@link io.reactiverdma.natives.ClosedResourceException}, in any
 * state (also before the id ever connected).
 */
public final class RdmaCmId extends NativeResource {
    /** One borrowed wrapper per ibv_context librdmacm opened, shared by every id on that device. */
    private static final Map<Long, VerbsContext> CONTEXTS = new ConcurrentHashMap<>();

    private final EventChannel channel;
    private final long address;
    private final PortSpace portSpace;
    /**
     * The argument buffer of every call on this id (sockaddr, rdma_conn_param): calls on one id must come
     * from one thread at a time (the engine makes them all on its rdma_cm thread); the call guard keeps a
     * close from freeing the id under them, not two callers from sharing this buffer.
     */
    private final ByteBuffer scratch = NativeMemory.allocate(512);
    private volatile QueuePair queuePair;

    private RdmaCmId(EventChannel channel, long address, PortSpace portSpace, String description) {
        super(description, channel);
        this.channel = channel;
        this.address = address;
        this.portSpace = portSpace;
        channel.register(this);
    }

    /** {@code rdma_create_id} on {@code channel} for {@code portSpace}. */
    public static RdmaCmId create(EventChannel channel, PortSpace portSpace) {
        Objects.requireNonNull(channel, "channel");
        Objects.requireNonNull(portSpace, "portSpace");
        channel.ensureOpen();
        ByteBuffer out = NativeMemory.allocate(8);
        int rc = LibRdmacm.rdma_create_id(channel.address(), NativeMemory.address(out), 0, portSpace.value());
        long id = out.getLong(0);
        Reference.reachabilityFence(out);
        if (rc != 0) {
            throw new NativeCallException("rdma_create_id", Native.getLastError(), portSpace.toString());
        }
        // the channel may begin closing meanwhile: then the new id is destroyed instead of leaked
        return wrapOrDestroy(() -> new RdmaCmId(channel, id, portSpace, "rdma_cm_id 0x" + Long.toHexString(id) + " ("
                + portSpace + ")"), () -> LibRdmacm.rdma_destroy_id(id));
    }

    /**
     * {@code rdma_get_devices}: the RDMA devices librdmacm opened, as the same borrowed contexts
     * {@link #verbsContext()} returns for ids on them. Each wrapper holds a reference that keeps librdmacm from
     * closing its context (it closes a removed device's context once nothing refers to it); closing the
     * wrapper drops that reference, it never closes the context itself.
     *
     * @throws NativeCallException when librdmacm cannot list them (no device, no kernel support)
     */
    public static List<VerbsContext> devices() {
        ByteBuffer count = NativeMemory.allocate(8);
        long list = LibRdmacm.rdma_get_devices(NativeMemory.address(count));
        if (list == 0) {
            throw new NativeCallException("rdma_get_devices", Native.getLastError(), "listing RDMA devices");
        }
        try {
            int n = count.getInt(0);
            Pointer array = new Pointer(list);
            List<VerbsContext> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(borrowed(array.getLong(8L * i)));
            }
            return out;
        } finally {
            // the wrappers took references of their own (see holding): this one only lived for the listing
            LibRdmacm.rdma_free_devices(list);
            Reference.reachabilityFence(count);
        }
    }

    /**
     * The names of the devices librdmacm lists now ({@code rdma_get_devices}, freed at once), without wrapping
     * or holding any of them. Listing is also what makes librdmacm notice a device that is gone (cma.c's
     * sync_devices_list): it closes that device's context ({@code ibv_close_device}) at once when nothing
     * refers to it any more (no id on it, no unfreed list), or when the last reference goes. A provider without
     * {@code disassociate_ucontext} (rxe, siw) finishes a removal only once every process closed its context,
     * so a process that released a removed device calls this until the device is no longer listed.
     * librdmacm notices nothing while no device at all is left (sync_devices_list returns early on an empty
     * list, rdma-core 32 and later): the last device's removal then waits for the process to end.
     *
     * @return the device names, empty when there is none
     */
    public static List<String> listedDeviceNames() {
        ByteBuffer count = NativeMemory.allocate(8);
        long list = LibRdmacm.rdma_get_devices(NativeMemory.address(count));
        if (list == 0) {
            return List.of();
        }
        try {
            int n = count.getInt(0);
            Pointer array = new Pointer(list);
            List<String> names = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                long dev = new Pointer(array.getLong(8L * i)).getLong(IbvStructs.IbvContext.DEVICE_OFFSET);
                names.add(dev == 0 ? "?" : LibIbverbs.ibv_get_device_name(dev));
            }
            return names;
        } finally {
            LibRdmacm.rdma_free_devices(list);
            Reference.reachabilityFence(count);
        }
    }

    /** True while a wrapper of the context at {@code verbs} is cached (tests: closing the wrapper prunes it). */
    static boolean cached(long verbs) {
        return CONTEXTS.containsKey(verbs);
    }

    private static VerbsContext borrowed(long verbs) {
        return CONTEXTS.compute(verbs, (k, v) -> v != null && !v.isClosed() ? v : holding(k));
    }

    /**
     * A wrapper of librdmacm's context that keeps it open while the wrapper lives. librdmacm closes a removed
     * device's context ({@code ibv_close_device} in cma.c's remove_cma_dev) as soon as nothing refers to it:
     * no id on it and no list of rdma_get_devices unfreed; the PD, MRs and async fd the engine still holds
     * on it would then be freed memory. An unfreed rdma_get_devices list is such a reference; it is freed when
     * the wrapper is closed. (A device already marked removed is not on a new list: its context then lives
     * as long as the ids on it.)
     */
    private static VerbsContext holding(long verbs) {
        long list = referenceTo(verbs);
        Runnable drop = list == 0 ? null : new Runnable() {
            private final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();

            @Override
            public void run() {
                if (done.compareAndSet(false, true)) {
                    LibRdmacm.rdma_free_devices(list);
                }
            }
        };
        VerbsContext[] self = new VerbsContext[1];
        // closing the wrapper also forgets it, so the cache holds only wrappers in use (this runs on close,
        // never inside the compute that creates the wrapper)
        Runnable release = () -> {
            CONTEXTS.remove(verbs, self[0]);
            if (drop != null) {
                drop.run();
            }
        };
        try {
            self[0] = VerbsContext.borrow(new Pointer(verbs), "ibv_context of librdmacm (" + deviceNameOf(verbs) + ")",
                    release);
            return self[0];
        } catch (RuntimeException e) {
            if (drop != null) {
                drop.run();
            }
            throw e;
        }
    }

    /**
     * A list of {@code rdma_get_devices} holding a reference to {@code verbs} alone (0 when librdmacm does not
     * list it): librdmacm counts a reference on every device of a list, so keeping the whole list would keep
     * every device of the host open, and the kernel could not finish removing any of them while this process
     * lives (seen on rxe: a device added after the engine's first list could not be deleted). The references to
     * the other devices are dropped at once ({@code rdma_free_devices} on a list of them alone, which frees that
     * array as librdmacm's own); the original array is freed without dropping anything.
     */
    private static long referenceTo(long verbs) {
        ByteBuffer count = NativeMemory.allocate(8);
        long list = LibRdmacm.rdma_get_devices(NativeMemory.address(count));
        Reference.reachabilityFence(count);
        if (list == 0) {
            return 0;
        }
        int n = count.getInt(0);
        Pointer all = new Pointer(list);
        boolean listed = false;
        for (int i = 0; i < n; i++) {
            listed |= all.getLong(8L * i) == verbs;
        }
        if (!listed) {
            LibRdmacm.rdma_free_devices(list);
            return 0;
        }
        // arrays that rdma_free_devices may free(): malloc'ed, NULL-terminated
        long mine = Native.malloc(16);
        long others = Native.malloc(8L * n);
        Pointer m = new Pointer(mine);
        m.setLong(0, verbs);
        m.setLong(8, 0);
        Pointer o = new Pointer(others);
        int k = 0;
        for (int i = 0; i < n; i++) {
            long ctx = all.getLong(8L * i);
            if (ctx != verbs) {
                o.setLong(8L * k++, ctx);
            }
        }
        o.setLong(8L * k, 0);
        LibRdmacm.rdma_free_devices(others);
        Native.free(list);
        return mine;
    }

    /** Wraps the new id a CONNECT_REQUEST carries; the caller owns it. */
    static RdmaCmId adoptRequest(EventChannel channel, long id, PortSpace portSpace) {
        return new RdmaCmId(channel, id, portSpace,
                "rdma_cm_id 0x" + Long.toHexString(id) + " (" + portSpace + ", connect request)");
    }

    /** The {@code struct rdma_cm_id *} address. */
    public long address() {
        return address;
    }

    public PortSpace portSpace() {
        return portSpace;
    }

    public EventChannel channel() {
        return channel;
    }

    private ByteBuffer idView() {
        return NativeMemory.view(address, CmStructs.CmId.SIZE);
    }

    /** {@code rdma_bind_addr}: binds to a local address (port 0 = any free port; see {@link #localAddress()}). */
    public void bind(InetSocketAddress local) {
        Objects.requireNonNull(local, "local");
        beginCall();
        try {
            SocketAddresses.write(local, scratch, 0);
            check("rdma_bind_addr", LibRdmacm.rdma_bind_addr(address, NativeMemory.address(scratch)), "to " + local);
        } finally {
            endCall();
        }
    }

    /**
     * {@code rdma_resolve_addr}: starts resolving {@code destination} to an RDMA device and address;
     * ADDR_RESOLVED or ADDR_ERROR follows on the channel within {@code timeoutMs}.
     *
     * @param sourceOrNull local address to bind to first, or null for the routing table's choice
     * @param timeoutMs    1..Integer.MAX_VALUE: a finite limit
     */
    public void resolveAddress(InetSocketAddress sourceOrNull, InetSocketAddress destination, int timeoutMs) {
        Objects.requireNonNull(destination, "destination");
        checkTimeout(timeoutMs);
        beginCall();
        try {
            long base = NativeMemory.address(scratch);
            long src = 0;
            if (sourceOrNull != null) {
                SocketAddresses.write(sourceOrNull, scratch, 128);
                src = base + 128;
            }
            SocketAddresses.write(destination, scratch, 256);
            check("rdma_resolve_addr", LibRdmacm.rdma_resolve_addr(address, src, base + 256, timeoutMs),
                    "to " + destination);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_resolve_route}: ROUTE_RESOLVED or ROUTE_ERROR follows within {@code timeoutMs}. */
    public void resolveRoute(int timeoutMs) {
        checkTimeout(timeoutMs);
        beginCall();
        try {
            check("rdma_resolve_route", LibRdmacm.rdma_resolve_route(address, timeoutMs), null);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_listen} (after {@link #bind}); CONNECT_REQUEST events follow. */
    public void listen(int backlog) {
        if (backlog < 0) {
            throw new IllegalArgumentException("backlog must be >= 0, got " + backlog);
        }
        beginCall();
        try {
            check("rdma_listen", LibRdmacm.rdma_listen(address, backlog), null);
        } finally {
            endCall();
        }
    }

    /**
     * The device librdmacm bound this id to (after address resolution, a bind to an RDMA address, or on a
     * connect request's id), as a borrowed {@link VerbsContext}: allocate the PD and CQs for
     * {@link #createQueuePair} from it. Its close never closes the device (librdmacm owns it).
     *
     * @throws IllegalStateException when the id is not bound to a device yet
     */
    public VerbsContext verbsContext() {
        beginCall();
        try {
            long verbs = idView().getLong(CmStructs.CmId.VERBS_OFFSET);
            if (verbs == 0) {
                throw new IllegalStateException(description() + " is not bound to an RDMA device yet: resolve an "
                        + "address (or bind to an RDMA device's address) first");
            }
            return borrowed(verbs);
        } finally {
            endCall();
        }
    }

    private static String deviceNameOf(long verbs) {
        return "0x" + Long.toHexString(verbs);
    }

    /** The RDMA port this id is bound to (valid with {@link #verbsContext()}). */
    public int portNum() {
        beginCall();
        try {
            return Byte.toUnsignedInt(idView().get(CmStructs.CmId.PORT_NUM_OFFSET));
        } finally {
            endCall();
        }
    }

    /**
     * {@code rdma_create_qp}: creates this id's QP, moved through its states by rdma_cm itself during
     * connect/accept. {@code pd} must come from {@link #verbsContext()}. The QP is closed with this id.
     */
    public QueuePair createQueuePair(ProtectionDomain pd, QpInitAttributes attributes) {
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(attributes, "attributes");
        if (attributes.sendCq() == null) {
            throw new IllegalArgumentException("attributes need a send CQ (and a receive CQ, or the send CQ is "
                    + "used for both): create them on verbsContext()");
        }
        beginCall();
        try {
            if (queuePair != null && !queuePair.isClosed()) {
                throw new IllegalStateException(description() + " already has a QP: " + queuePair);
            }
            long verbs = idView().getLong(CmStructs.CmId.VERBS_OFFSET);
            if (verbs == 0) {
                throw new IllegalStateException(description() + " is not bound to an RDMA device yet");
            }
            if (pd.context().address() != verbs) {
                throw new IllegalArgumentException("pd belongs to " + pd.context() + ", not to this id's device: "
                        + "allocate it from verbsContext()");
            }
            ByteBuffer attr = NativeMemory.allocate(QpInitAttributes.SIZE);
            attributes.writeTo(attr, 0);
            if (attributes.recvCq() == null) {
                // NULL would make librdmacm create a CQ (and channel) of its own that nobody polls
                attr.putLong(QpInitAttributes.RECV_CQ_OFFSET, attributes.sendCq().address());
            }
            int rc = LibRdmacm.rdma_create_qp(address, pd.address(), NativeMemory.address(attr));
            Reference.reachabilityFence(attr);
            check("rdma_create_qp", rc, attributes.toString());
            long qp = idView().getLong(CmStructs.CmId.QP_OFFSET);
            CompletionQueue recvCq = attributes.recvCq() != null ? attributes.recvCq() : attributes.sendCq();
            long self = address;
            // a CQ, the SRQ or the PD may begin closing meanwhile: then the QP is destroyed, not left on the id
            QueuePair created = wrapOrDestroy(() -> QueuePair.adopt(new Pointer(qp), pd, attributes.sendCq(), recvCq,
                    attributes.srq(), null, p -> destroyQpOfId()), () -> LibRdmacm.rdma_destroy_qp(self));
            queuePair = created;
            return created;
        } finally {
            endCall();
        }
    }

    /**
     * {@code rdma_destroy_qp} as a call on this id, so it does not run while another thread is inside a call
     * on the id that uses the QP ({@code rdma_disconnect} moves it to the error state): a QP closed with its
     * PD or CQ, from another thread, waits for such a call. When the id itself is closing, its release is
     * what destroys the QP (its calls have left by then), or that close waits for this one.
     */
    private void destroyQpOfId() {
        boolean entered;
        try {
            beginCall();
            entered = true;
        } catch (io.reactiverdma.natives.ClosedResourceException closing) {
            entered = false;
        }
        try {
            LibRdmacm.rdma_destroy_qp(address);
        } finally {
            if (entered) {
                endCall();
            }
        }
    }

    /** The QP created by {@link #createQueuePair}, or null. */
    public QueuePair queuePair() {
        QueuePair qp = queuePair;
        return qp == null || qp.isClosed() ? null : qp;
    }

    /** Destroys the QP created on this id ({@code rdma_destroy_qp}); harmless when there is none. */
    public void destroyQueuePair() {
        QueuePair qp = queuePair;
        if (qp != null) {
            qp.close();
        }
    }

    /**
     * {@code rdma_connect} (after ROUTE_RESOLVED): ESTABLISHED (RC: with the peer's accept private data),
     * REJECTED (with the peer's reject private data), UNREACHABLE or CONNECT_ERROR follows.
     */
    public void connect(ConnParam param) {
        Objects.requireNonNull(param, "param");
        param.checkPrivateData("rdma_connect", portSpace == PortSpace.UDP ? ConnParam.MAX_UD_PRIVATE_DATA
                : ConnParam.MAX_CONNECT_PRIVATE_DATA);
        beginCall();
        try {
            long base = NativeMemory.address(scratch);
            param.writeTo(scratch, base, 0, 64);
            check("rdma_connect", LibRdmacm.rdma_connect(address, base), param.toString());
        } finally {
            endCall();
        }
    }

    /** {@code rdma_accept} of a CONNECT_REQUEST's id; ESTABLISHED follows. */
    public void accept(ConnParam param) {
        Objects.requireNonNull(param, "param");
        param.checkPrivateData("rdma_accept", ConnParam.MAX_ACCEPT_PRIVATE_DATA);
        beginCall();
        try {
            long base = NativeMemory.address(scratch);
            param.writeTo(scratch, base, 0, 64);
            check("rdma_accept", LibRdmacm.rdma_accept(address, base), param.toString());
        } finally {
            endCall();
        }
    }

    /** {@code rdma_reject} of a CONNECT_REQUEST's id; the peer sees REJECTED carrying {@code privateData}. */
    public void reject(byte[] privateData) {
        Objects.requireNonNull(privateData, "privateData");
        if (privateData.length > ConnParam.MAX_REJECT_PRIVATE_DATA) {
            throw new IllegalArgumentException("rdma_reject: privateData is " + privateData.length
                    + " bytes, more than the " + ConnParam.MAX_REJECT_PRIVATE_DATA + " a reject carries");
        }
        beginCall();
        try {
            scratch.put(0, privateData);
            check("rdma_reject", LibRdmacm.rdma_reject(address, privateData.length == 0 ? 0 : NativeMemory.address(scratch),
                    (byte) privateData.length), null);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_disconnect}: DISCONNECTED follows on both sides; the QP moves to ERR (flushing its work). */
    public void disconnect() {
        beginCall();
        try {
            check("rdma_disconnect", LibRdmacm.rdma_disconnect(address), null);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_migrate_id}: moves this id's events to {@code target}. */
    public void migrate(EventChannel target) {
        Objects.requireNonNull(target, "target");
        beginCall();
        try {
            target.ensureOpen();
            if (target != channel) {
                throw new UnsupportedOperationException("migrating to another EventChannel object changes the id's "
                        + "owner; close and recreate the id on the target channel instead");
            }
            check("rdma_migrate_id", LibRdmacm.rdma_migrate_id(address, target.address()), null);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_set_option(id, level, optname, &value, sizeof(int))} for the int-valued options. */
    public void setOption(int level, int optname, int value) {
        beginCall();
        try {
            scratch.putInt(0, value);
            check("rdma_set_option", LibRdmacm.rdma_set_option(address, level, optname, NativeMemory.address(scratch), 4),
                    "level " + level + " option " + optname + " = " + value);
        } finally {
            endCall();
        }
    }

    /** RDMA_OPTION_ID_TOS: the type of service of this id's traffic (before resolving the route). */
    public void setTypeOfService(int tos) {
        if (tos < 0 || tos > 255) {
            throw new IllegalArgumentException("tos must be 0..255, got " + tos);
        }
        scratch.put(0, (byte) tos);
        beginCall();
        try {
            check("rdma_set_option", LibRdmacm.rdma_set_option(address, 0, 0, NativeMemory.address(scratch), 1),
                    "RDMA_OPTION_ID_TOS");
        } finally {
            endCall();
        }
    }

    /** RDMA_OPTION_ID_REUSEADDR (before bind). */
    public void setReuseAddress(boolean reuse) {
        setOption(0, 1, reuse ? 1 : 0);
    }

    /** RDMA_OPTION_ID_AFONLY: an IPv6 listener does not take IPv4 (before bind). */
    public void setAfOnly(boolean afOnly) {
        setOption(0, 2, afOnly ? 1 : 0);
    }

    /** RDMA_OPTION_ID_ACK_TIMEOUT: the QP's ACK timeout exponent (4.096 us * 2^n), 1..31. */
    public void setAckTimeout(int exponent) {
        if (exponent < 1 || exponent > 31) {
            throw new IllegalArgumentException("ack timeout exponent must be 1..31 (0 = infinite is refused), got "
                    + exponent);
        }
        scratch.put(0, (byte) exponent);
        beginCall();
        try {
            check("rdma_set_option", LibRdmacm.rdma_set_option(address, 0, 3, NativeMemory.address(scratch), 1),
                    "RDMA_OPTION_ID_ACK_TIMEOUT");
        } finally {
            endCall();
        }
    }

    /** {@code rdma_join_multicast} (after address resolution): MULTICAST_JOIN or MULTICAST_ERROR follows. */
    public void joinMulticast(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        beginCall();
        try {
            SocketAddresses.write(group, scratch, 0);
            check("rdma_join_multicast", LibRdmacm.rdma_join_multicast(address, NativeMemory.address(scratch), 0),
                    "group " + group);
        } finally {
            endCall();
        }
    }

    /** {@code rdma_leave_multicast}. */
    public void leaveMulticast(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        beginCall();
        try {
            SocketAddresses.write(group, scratch, 0);
            check("rdma_leave_multicast", LibRdmacm.rdma_leave_multicast(address, NativeMemory.address(scratch)),
                    "group " + group);
        } finally {
            endCall();
        }
    }

    /** The local address ({@code rdma_get_local_addr}), or null before bind/resolve. */
    public InetSocketAddress localAddress() {
        beginCall();
        try {
            return SocketAddresses.read(idView(), CmStructs.CmId.SRC_ADDR_OFFSET);
        } finally {
            endCall();
        }
    }

    /** The peer's address ({@code rdma_get_peer_addr}), or null before resolve/connect. */
    public InetSocketAddress peerAddress() {
        beginCall();
        try {
            return SocketAddresses.read(idView(), CmStructs.CmId.DST_ADDR_OFFSET);
        } finally {
            endCall();
        }
    }

    private static void checkTimeout(int timeoutMs) {
        if (timeoutMs <= 0) {
            throw new IllegalArgumentException("timeoutMs must be positive (a finite limit), got " + timeoutMs);
        }
    }

    private void check(String call, int rc, String detail) {
        Reference.reachabilityFence(scratch);
        if (rc != 0) {
            int errno = Native.getLastError();
            String what = description() + (detail != null ? " " + detail : "");
            if (errno == Errno.EINVAL && "rdma_create_qp".equals(call)) {
                what += " (the id may not be bound to a device yet, or the attributes exceed the device's limits)";
            }
            throw new NativeCallException(call, errno, what);
        }
    }

    @Override
    protected void release() {
        try {
            destroyQueuePair();
        } finally {
            channel.unregister(this, address);
            int rc = LibRdmacm.rdma_destroy_id(address);
            if (rc != 0) {
                throw new NativeCallException("rdma_destroy_id", Native.getLastError(), description());
            }
        }
    }
}
