package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A shared receive queue ({@code struct ibv_srq}): one pool of receive work requests for many QPs (created
 * with {@link QpInitAttributes#srq}). Closing it first closes the QPs using it (ibv_destroy_srq fails with
 * EBUSY while one exists). Posts go through the provider's {@code ops.post_srq_recv} with a reused argument
 * frame (see {@link QueuePair}), serialised by a lock.
 */
public final class SharedReceiveQueue extends NativeResource {
    private final ProtectionDomain pd;
    private final long address;
    private final Pointer pointer;
    private final SrqAttributes granted;
    private final Function postFn;
    private final Object[] postArgs;
    /** FFM or libffi call (null: the Function path); guarded by postArgs. */
    private final DataPathCall postCall;
    final Dependents users = new Dependents(this);

    SharedReceiveQueue(ProtectionDomain pd, long address, SrqAttributes granted) {
        super("ibv_srq on " + pd.context().deviceName(), pd);
        this.pd = pd;
        this.address = address;
        this.pointer = new Pointer(address);
        this.granted = granted;
        this.postFn = pd.context().postSrqRecv;
        this.postArgs = new Object[] {pointer, null, null};
        // Adopted by the PD above: a failure from here on abandons this wrapper before the creator destroys the
        // SRQ, or closing the PD would destroy it again (see CompletionQueue's constructor).
        try {
            this.postCall = Downcalls.bind(DataPathCall.Signature.PTR_PTR_PTR, pd.context().postSrqRecvAddress, address);
            pd.context().register(address, this);
        } catch (RuntimeException | Error e) {
            abandon();
            throw e;
        }
    }

    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** The {@code struct ibv_srq *}. */
    public long address() {
        return address;
    }

    public Pointer pointer() {
        return pointer;
    }

    /** The sizes granted at creation. */
    public SrqAttributes grantedAttributes() {
        return granted;
    }

    /** {@code ibv_post_srq_recv} of the whole chain. */
    public void postReceive(ReceiveWorkRequests wrs) {
        Objects.requireNonNull(wrs, "wrs");
        if (wrs.count() == 0) {
            throw new IllegalArgumentException("wrs is empty: add() work requests first");
        }
        int rc;
        beginCall();
        try {
            synchronized (postArgs) {
                wrs.clearBadWr();
                if (postCall != null) {
                    rc = postCall.call(wrs.address(), wrs.badWrAddress());
                } else {
                    postArgs[1] = wrs.pointer;
                    postArgs[2] = wrs.badWrPointer;
                    rc = postFn.invokeInt(postArgs);
                }
            }
        } finally {
            endCall();
        }
        Reference.reachabilityFence(wrs);
        if (rc != 0) {
            int failed = wrs.failedIndex();
            throw Failures.returned("ibv_post_srq_recv", rc, description() + ": " + (failed >= 0
                    ? "work request " + failed + " of " + wrs.count() + " refused (those before it were posted)"
                    : wrs.count() + " work requests"), postCall == null);
        }
    }

    /** {@code ibv_modify_srq} of the fields {@code mask} selects ({@link SrqAttrMask}). */
    public void modify(SrqAttributes attributes, int mask) {
        Objects.requireNonNull(attributes, "attributes");
        if ((mask & ~(SrqAttrMask.MAX_WR | SrqAttrMask.LIMIT)) != 0 || mask == 0) {
            throw new IllegalArgumentException("mask must combine SrqAttrMask.MAX_WR and LIMIT, got 0x" + Integer.toHexString(mask));
        }
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(SrqAttributes.SIZE);
            attributes.writeTo(b, 0);
            int rc = LibIbverbs.ibv_modify_srq(address, Buffers.address(b), mask);
            Reference.reachabilityFence(b);
            if (rc != 0) {
                throw Failures.returned("ibv_modify_srq", rc, description() + " with " + attributes + ", mask " + mask);
            }
        } finally {
            endCall();
        }
    }

    /**
     * Arms the limit: one {@link AsyncEventType#SRQ_LIMIT_REACHED} event fires when fewer than {@code limit}
     * receives remain queued (then the SRQ is disarmed until armed again).
     */
    public void armLimit(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1, got " + limit);
        }
        modify(new SrqAttributes(0, 0, limit), SrqAttrMask.LIMIT);
    }

    /** {@code ibv_query_srq}. */
    public SrqAttributes query() {
        beginCall();
        try {
            ByteBuffer b = Buffers.allocate(SrqAttributes.SIZE);
            int rc = LibIbverbs.ibv_query_srq(address, Buffers.address(b));
            if (rc != 0) {
                throw Failures.returned("ibv_query_srq", rc, description());
            }
            SrqAttributes a = SrqAttributes.read(b, 0);
            Reference.reachabilityFence(b);
            return a;
        } finally {
            endCall();
        }
    }

    @Override
    protected void release() {
        try {
            users.closeAll();
        } finally {
            pd.context().ackEventsFor(address);
            pd.context().unregister(address);
        }
        Failures.check("ibv_destroy_srq", LibIbverbs.ibv_destroy_srq(address));
    }
}
