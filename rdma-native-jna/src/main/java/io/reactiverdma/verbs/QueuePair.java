package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A queue pair ({@code struct ibv_qp}), child of its protection domain and a dependent of the CQs (and SRQ)
 * it uses: closing any of those closes the QP first.
 *
 * <p>State changes: {@link #modify(QpAttributes, int)} or the out-of-band bring-up of ibv_rc_pingpong,
 * {@link #toInit} → {@link #toRtr} → {@link #toRts}, each applying the attribute mask the QP type needs.
 *
 * <p>{@link #postSend(SendWorkRequests)} and {@link #postReceive(ReceiveWorkRequests)} call the provider's
 * {@code ops.post_send} / {@code ops.post_recv} through libffi with per-QP argument frames (fallback: cached
 * JNA {@link Function}s, reusing one argument array and pre-built pointers): a post allocates nothing. Sends are serialised by one lock and
 * receives by another, so any thread may post.
 */
public final class QueuePair extends NativeResource {
    private final ProtectionDomain pd;
    private final VerbsContext context;
    private final long address;
    private final Pointer pointer;
    private final int qpNum;
    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final SharedReceiveQueue srq;
    private final Consumer<Pointer> destroyer;
    private volatile QpCapabilities capabilities;

    private final Function postSendFn;
    private final Function postRecvFn;
    private final Object[] sendArgs;
    private final Object[] recvArgs;
    /** FFM or libffi calls (null: the Function path); guarded by sendArgs / recvArgs. */
    private final DataPathCall sendCall;
    private final DataPathCall recvCall;

    QueuePair(ProtectionDomain pd, long address, CompletionQueue sendCq, CompletionQueue recvCq, SharedReceiveQueue srq,
            QpCapabilities capabilities, String description, Consumer<Pointer> destroyer) {
        super(description != null ? description : describe(pd, address), pd);
        this.pd = pd;
        this.context = pd.context();
        this.address = address;
        this.pointer = new Pointer(address);
        this.qpNum = pointer.getInt(IbvStructs.IbvQp.QP_NUM_OFFSET);
        this.type = QpType.of(pointer.getInt(IbvStructs.IbvQp.QP_TYPE_OFFSET));
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.srq = srq;
        this.capabilities = capabilities;
        this.destroyer = destroyer;
        this.postSendFn = context.postSend;
        this.postRecvFn = context.postRecv;
        this.sendArgs = new Object[] {pointer, null, null};
        this.recvArgs = new Object[] {pointer, null, null};
        // Adopted by the PD above: a failure from here on (a binding refused, a CQ or the SRQ began closing)
        // abandons this wrapper before the creator destroys the QP, or closing the PD would destroy it again
        // (see CompletionQueue's constructor).
        try {
            this.sendCall = Downcalls.bind(DataPathCall.Signature.PTR_PTR_PTR, context.postSendAddress, address);
            this.recvCall = Downcalls.bind(DataPathCall.Signature.PTR_PTR_PTR, context.postRecvAddress, address);
            sendCq.users.add(this);
            recvCq.users.add(this);
            if (srq != null) {
                srq.users.add(this);
            }
            context.register(address, this);
        } catch (RuntimeException | Error e) {
            sendCq.users.remove(this);
            recvCq.users.remove(this);
            if (srq != null) {
                srq.users.remove(this);
            }
            abandon();
            throw e;
        }
    }

    private static String describe(ProtectionDomain pd, long address) {
        Pointer p = new Pointer(address);
        QpType t = QpType.of(p.getInt(IbvStructs.IbvQp.QP_TYPE_OFFSET));
        return "ibv_qp " + p.getInt(IbvStructs.IbvQp.QP_NUM_OFFSET) + " (" + t + ") on " + pd.context().deviceName();
    }

    /**
     * Wraps a QP created elsewhere, typically by {@code rdma_create_qp}. It becomes a child of {@code pd} and a
     * dependent of its CQs/SRQ like any other QP; closing it calls {@code destroyer} (e.g. one that calls
     * {@code rdma_destroy_qp(id)}) instead of {@code ibv_destroy_qp}.
     *
     * @param ibvQp       the {@code struct ibv_qp *}
     * @param pd          its protection domain (a {@link ProtectionDomain#borrow borrowed} one is fine)
     * @param sendCq      its send CQ
     * @param recvCq      its receive CQ
     * @param srqOrNull   its SRQ, or null
     * @param description for messages, or null for the default ("ibv_qp N (RC) on rxe0")
     * @param destroyer   releases the QP; called once, with {@code ibvQp}
     */
    public static QueuePair adopt(Pointer ibvQp, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
            SharedReceiveQueue srqOrNull, String description, Consumer<Pointer> destroyer) {
        Objects.requireNonNull(ibvQp, "ibvQp");
        Objects.requireNonNull(pd, "pd");
        Objects.requireNonNull(sendCq, "sendCq");
        Objects.requireNonNull(recvCq, "recvCq");
        Objects.requireNonNull(destroyer, "destroyer");
        if (Pointer.nativeValue(ibvQp) == 0) {
            throw new IllegalArgumentException("ibvQp is NULL");
        }
        pd.ensureOpen();
        sendCq.ensureOpen();
        recvCq.ensureOpen();
        if (srqOrNull != null) {
            srqOrNull.ensureOpen();
        }
        return new QueuePair(pd, Pointer.nativeValue(ibvQp), sendCq, recvCq, srqOrNull, null, description, destroyer);
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The QP number the peer addresses ({@code qp->qp_num}, 24 bit). */
    public int qpNum() {
        return qpNum;
    }

    public QpType type() {
        return type;
    }

    /** The {@code struct ibv_qp *}. */
    public long address() {
        return address;
    }

    public Pointer pointer() {
        return pointer;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    /** Its SRQ, or null. */
    public SharedReceiveQueue srq() {
        return srq;
    }

    /** Granted queue sizes (queried once for adopted QPs). */
    public QpCapabilities capabilities() {
        QpCapabilities c = capabilities;
        if (c == null) {
            c = query(QpAttrMask.CAP).capabilities();
            capabilities = c;
        }
        return c;
    }

    // ---------------------------------------------------------------------------------------- state changes
    /**
     * {@code ibv_modify_qp} with the fields {@code mask} selects ({@link QpAttrMask}). Refuses rnr_retry 7
     * and timeout 0 (see {@link QpAttributes}).
     */
    public void modify(QpAttributes attributes, int mask) {
        Objects.requireNonNull(attributes, "attributes");
        attributes.validate(mask);
        modify(attributes, mask, null);
    }

    private void modify(QpAttributes attributes, int mask, QpState stateOverride) {
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(QpAttributes.SIZE);
            attributes.writeTo(b, 0);
            if (stateOverride != null) {
                b.putInt(QpAttributes.QP_STATE_OFFSET, stateOverride.value());
            }
            int rc = LibIbverbs.ibv_modify_qp(address, Buffers.address(b), mask);
            Reference.reachabilityFence(b);
            if (rc != 0) {
                throw Failures.returned("ibv_modify_qp", rc, description() + " to " + (stateOverride != null ? stateOverride
                        : (mask & QpAttrMask.STATE) != 0 ? attributes.qpState() : "(state unchanged)")
                        + " with mask 0x" + Integer.toHexString(mask));
            }
        } finally {
            endCall();
        }
    }

    /**
     * RESET → INIT: port, P_Key index, and the access flags (RC/UC) or Q_Key (UD) of {@code attributes}.
     * The attributes' own state is ignored.
     */
    public void toInit(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        modify(attributes, type == QpType.UD ? QpAttrMask.UD_INIT : QpAttrMask.RC_INIT, QpState.INIT);
    }

    /**
     * INIT → RTR: for RC the address vector, path MTU, destination QPN, receive PSN, responder resources and
     * RNR timer; for UC the first five; for UD nothing but the state.
     */
    public void toRtr(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        int mask = switch (type) {
            case UD -> QpAttrMask.STATE;
            case UC -> QpAttrMask.UC_RTR;
            default -> QpAttrMask.RC_RTR;
        };
        attributes.validate(mask);
        modify(attributes, mask, QpState.RTR);
    }

    /** RTR → RTS: for RC timeout, retry counts, send PSN and initiator depth; for UC/UD the send PSN. */
    public void toRts(QpAttributes attributes) {
        Objects.requireNonNull(attributes, "attributes");
        int mask = type == QpType.RC ? QpAttrMask.RC_RTS : QpAttrMask.UD_RTS;
        attributes.validate(mask);
        modify(attributes, mask, QpState.RTS);
    }

    /** Any state → ERR: outstanding work requests complete with {@link WcStatus#WR_FLUSH_ERR}. */
    public void toError() {
        modify(new QpAttributes(), QpAttrMask.STATE, QpState.ERR);
    }

    /** Any state → RESET: the queues are emptied (without completions). */
    public void toReset() {
        modify(new QpAttributes(), QpAttrMask.STATE, QpState.RESET);
    }

    /** {@code ibv_query_qp} of the fields {@code mask} selects (the others read as zero/defaults). */
    public QpAttributes query(int mask) {
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(QpAttributes.SIZE + QpInitAttributes.SIZE);
            long a = Buffers.address(b);
            int rc = LibIbverbs.ibv_query_qp(address, a, mask, a + QpAttributes.SIZE);
            if (rc != 0) {
                Reference.reachabilityFence(b);
                throw Failures.returned("ibv_query_qp", rc, description());
            }
            QpAttributes attrs = QpAttributes.read(b, 0);
            Reference.reachabilityFence(b);
            return attrs;
        } finally {
            endCall();
        }
    }

    /** {@code ibv_query_qp} of everything ({@link QpAttrMask#ALL}). */
    public QpAttributes query() {
        return query(QpAttrMask.ALL);
    }

    /** The current state, as ibv_query_qp reports it. */
    public QpState state() {
        return query(QpAttrMask.STATE).qpState();
    }

    // ---------------------------------------------------------------------------------------------- posting
    /**
     * {@code ibv_post_send} of the whole chain (all {@code wrs.count()} work requests, in one call).
     *
     * @throws IllegalArgumentException when the chain is empty
     * @throws io.reactiverdma.natives.ClosedResourceException when this QP, or an address handle or memory
     *                                   window a work request names, was closed
     * @throws NativeCallException       when the provider refuses a work request (the message says which;
     *                                   requests before it were posted): ENOMEM = send queue full, EINVAL =
     *                                   bad request (too many SGEs, inline data too long, wrong opcode ...)
     */
    public void postSend(SendWorkRequests wrs) {
        Objects.requireNonNull(wrs, "wrs");
        if (wrs.count() == 0) {
            throw new IllegalArgumentException("wrs is empty: add() work requests first");
        }
        int rc;
        beginCall();
        try {
            wrs.checkReferences();
            synchronized (sendArgs) {
                wrs.clearBadWr();
                if (sendCall != null) {
                    rc = sendCall.call(wrs.address(), wrs.badWrAddress());
                } else {
                    sendArgs[1] = wrs.pointer;
                    sendArgs[2] = wrs.badWrPointer;
                    rc = postSendFn.invokeInt(sendArgs);
                }
            }
        } finally {
            endCall();
        }
        Reference.reachabilityFence(wrs);
        if (rc != 0) {
            throw postFailure("ibv_post_send", rc, wrs.failedIndex(), wrs.count(), sendCall == null);
        }
    }

    /**
     * {@code ibv_post_recv} of the whole chain. Not for QPs that use an SRQ (post to the SRQ).
     *
     * @throws NativeCallException ENOMEM = receive queue full, EINVAL = bad request
     */
    public void postReceive(ReceiveWorkRequests wrs) {
        Objects.requireNonNull(wrs, "wrs");
        if (wrs.count() == 0) {
            throw new IllegalArgumentException("wrs is empty: add() work requests first");
        }
        if (srq != null) {
            throw new IllegalStateException(description() + " receives from an SRQ: post receives to the SRQ");
        }
        int rc;
        beginCall();
        try {
            synchronized (recvArgs) {
                wrs.clearBadWr();
                if (recvCall != null) {
                    rc = recvCall.call(wrs.address(), wrs.badWrAddress());
                } else {
                    recvArgs[1] = wrs.pointer;
                    recvArgs[2] = wrs.badWrPointer;
                    rc = postRecvFn.invokeInt(recvArgs);
                }
            }
        } finally {
            endCall();
        }
        Reference.reachabilityFence(wrs);
        if (rc != 0) {
            throw postFailure("ibv_post_recv", rc, wrs.failedIndex(), wrs.count(), recvCall == null);
        }
    }

    private NativeCallException postFailure(String call, int rc, int failed, int count, boolean errnoCaptured) {
        String where = failed >= 0 ? "work request " + failed + " of " + count + " refused (those before it were posted)"
                : "no work request was named as bad (" + count + " in the chain)";
        return Failures.returned(call, rc, description() + ": " + where, errnoCaptured);
    }

    // ------------------------------------------------------------------------------------------- multicast
    /** {@code ibv_attach_mcast} (UD QPs). */
    public void attachMulticast(Gid gid, int lid) {
        mcast("ibv_attach_mcast", gid, lid, true);
    }

    /** {@code ibv_detach_mcast}. */
    public void detachMulticast(Gid gid, int lid) {
        mcast("ibv_detach_mcast", gid, lid, false);
    }

    private void mcast(String call, Gid gid, int lid, boolean attach) {
        Objects.requireNonNull(gid, "gid");
        AddressHandleAttributes.range("lid", lid, 0, 0xffff);
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(Gid.SIZE);
            gid.write(b, 0);
            long a = Buffers.address(b);
            int rc = attach ? LibIbverbs.ibv_attach_mcast(address, a, (short) lid)
                    : LibIbverbs.ibv_detach_mcast(address, a, (short) lid);
            Reference.reachabilityFence(b);
            if (rc != 0) {
                throw Failures.returned(call, rc, description() + " group " + gid);
            }
        } finally {
            endCall();
        }
    }

    @Override
    protected void release() {
        try {
            context.ackEventsFor(address);
        } finally {
            context.unregister(address);
            sendCq.users.remove(this);
            recvCq.users.remove(this);
            if (srq != null) {
                srq.users.remove(this);
            }
        }
        if (destroyer != null) {
            destroyer.accept(pointer);
        } else {
            Failures.check("ibv_destroy_qp", LibIbverbs.ibv_destroy_qp(address));
        }
    }
}
