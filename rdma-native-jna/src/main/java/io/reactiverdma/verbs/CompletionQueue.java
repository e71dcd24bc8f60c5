package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;

import java.lang.ref.Reference;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A completion queue ({@code struct ibv_cq}).
 *
 * <p>{@link #poll(WorkCompletions)} and {@link #requestNotify(boolean)} call the provider's
 * {@code ops.poll_cq} / {@code ops.req_notify_cq} through FFM downcalls on JDK 22+, libffi with a per-CQ
 * argument frame before (or, as a fallback, cached JNA {@link Function}s with a reused argument array and
 * pre-built pointers; {@link Verbs#dataPathCalls()} says which): no allocation
 * per call (the classic {@code ibv_poll_cq}, not the extended
 * {@code ibv_start_poll} API, which is buggy in Debian's rdma-core v44 rxe provider). Polls and notify
 * requests are serialised by a lock per CQ, so any thread may call them; for speed, poll from one thread.
 *
 * <p>Closing it first closes the QPs that use it (ibv_destroy_cq fails with EBUSY while one exists) and
 * acknowledges any completion events not yet acknowledged (ibv_destroy_cq would wait for them forever).
 */
public final class CompletionQueue extends NativeResource {
    private static final Integer ZERO = 0;
    private static final Integer ONE = 1;

    private final VerbsContext context;
    private final long address;
    private final Pointer pointer;
    private final CompletionChannel channel;
    private final boolean owned;
    private final Function pollFn;
    private final Function notifyFn;
    private final Object[] pollArgs;
    private final Object[] notifyArgs;
    /** FFM or libffi calls (null: the Function path); guarded by pollArgs / notifyArgs. */
    private final DataPathCall pollCall;
    private final DataPathCall notifyCall;
    private final AtomicInteger unackedEvents = new AtomicInteger();
    final Dependents users = new Dependents(this);

    CompletionQueue(VerbsContext context, long address, CompletionChannel channel, boolean owned, String description) {
        super(description, context);
        this.context = context;
        this.address = address;
        this.pointer = new Pointer(address);
        this.channel = channel;
        this.owned = owned;
        this.pollFn = context.pollCq;
        this.notifyFn = context.reqNotifyCq;
        this.pollArgs = new Object[] {pointer, null, null};
        this.notifyArgs = new Object[] {pointer, ZERO};
        // Adopted by the context above: a failure from here on (a binding refused, the channel began closing)
        // abandons this wrapper before the creator destroys the CQ, or closing the context would destroy it
        // again (a use after free in the provider: ibv_destroy_cq crashed the device run's JVM).
        try {
            this.pollCall = Downcalls.bind(DataPathCall.Signature.PTR_INT_PTR, context.pollCqAddress, address);
            this.notifyCall = Downcalls.bind(DataPathCall.Signature.PTR_INT, context.reqNotifyCqAddress, address);
            if (channel != null) {
                channel.attach(this);
            }
            context.register(address, this);
        } catch (RuntimeException | Error e) {
            abandon();
            throw e;
        }
    }

    /**
     * Wraps a CQ created by someone else (e.g. by librdmacm for {@code rdma_create_ep}); closing the wrapper
     * closes the QPs using it but never destroys the CQ.
     */
    public static CompletionQueue borrow(VerbsContext context, Pointer ibvCq, String description) {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(ibvCq, "ibvCq");
        Objects.requireNonNull(description, "description");
        context.ensureOpen();
        return new CompletionQueue(context, Pointer.nativeValue(ibvCq), null, false, description);
    }

    public VerbsContext context() {
        return context;
    }

    /** The {@code struct ibv_cq *}. */
    public long address() {
        return address;
    }

    public Pointer pointer() {
        return pointer;
    }

    /** The completion channel events go to, or null. */
    public CompletionChannel channel() {
        return channel;
    }

    /** The number of entries the CQ really has ({@code cq->cqe}; at least what was asked for). */
    public int capacity() {
        beginCall();
        try {
            return pointer.getInt(IbvStructs.IbvCq.CQE_OFFSET);
        } finally {
            endCall();
        }
    }

    /**
     * {@code ibv_poll_cq}: moves up to {@code wcs.capacity()} completions into {@code wcs} and returns how
     * many (0 when the CQ is empty); also {@code wcs.count()}. Allocates nothing per completion.
     *
     * @throws NativeCallException when the provider reports an error (negative return)
     */
    public int poll(WorkCompletions wcs) {
        Objects.requireNonNull(wcs, "wcs");
        int n;
        beginCall();
        try {
            synchronized (pollArgs) {
                if (pollCall != null) {
                    n = pollCall.call(wcs.capacity(), wcs.address());
                } else {
                    pollArgs[1] = wcs.boxedCapacity;
                    pollArgs[2] = wcs.pointer;
                    n = pollFn.invokeInt(pollArgs);
                }
            }
        } finally {
            endCall();
        }
        Reference.reachabilityFence(wcs);
        if (n < 0) {
            wcs.count(0);
            throw pollFailure(description(), n);
        }
        wcs.count(n);
        return n;
    }

    /**
     * A negative return of {@code ibv_poll_cq}: a provider code, not an errno (mlx5's {@code CQ_POLL_ERR} is
     * -2; read as an errno it said "errno 2, No such file or directory"), so the exception carries errno 0 and
     * names the code.
     */
    static NativeCallException pollFailure(String cq, int rc) {
        return new NativeCallException("ibv_poll_cq", 0, cq + ": the provider returned " + rc);
    }

    /**
     * {@code ibv_req_notify_cq}: arm the CQ so that the next completion (or the next solicited one) produces
     * an event on its channel. Arm, then poll once more before waiting, or a completion that arrived
     * in-between is missed.
     */
    public void requestNotify(boolean solicitedOnly) {
        beginCall();
        try {
            if (channel == null) {
                throw new IllegalStateException(description() + " has no completion channel: events would go nowhere");
            }
            int rc;
            synchronized (notifyArgs) {
                if (notifyCall != null) {
                    rc = notifyCall.call(solicitedOnly ? 1 : 0);
                } else {
                    notifyArgs[1] = solicitedOnly ? ONE : ZERO;
                    rc = notifyFn.invokeInt(notifyArgs);
                }
            }
            if (rc != 0) {
                throw Failures.returned("ibv_req_notify_cq", rc, description(), notifyCall == null);
            }
        } finally {
            endCall();
        }
    }

    /** {@code ibv_resize_cq}: at least {@code size} entries (needs provider support; rxe has it). */
    public void resize(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, got " + size);
        }
        beginCall();
        try {
            synchronized (pollArgs) {
                Failures.check("ibv_resize_cq", LibIbverbs.ibv_resize_cq(address, size));
            }
        } finally {
            endCall();
        }
    }

    void eventReceived() {
        unackedEvents.incrementAndGet();
    }

    /** {@code ibv_ack_cq_events}: acknowledge events returned by the channel (batching is fine). */
    public void ackEvents(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, got " + count);
        }
        beginCall();
        try {
            int pending = unackedEvents.get();
            if (count > pending) {
                throw new IllegalArgumentException("acknowledging " + count + " events but only " + pending
                        + " were received and not acknowledged");
            }
            unackedEvents.addAndGet(-count);
            LibIbverbs.ibv_ack_cq_events(address, count);
        } finally {
            endCall();
        }
    }

    /** Events received from the channel and not acknowledged yet. */
    public int unacknowledgedEvents() {
        return unackedEvents.get();
    }

    @Override
    protected void release() {
        try {
            users.closeAll();
        } finally {
            int pending = unackedEvents.getAndSet(0);
            if (pending > 0) {
                LibIbverbs.ibv_ack_cq_events(address, pending);
            }
            context.ackEventsFor(address);
            context.unregister(address);
            if (channel != null) {
                channel.detach(this);
            }
        }
        if (owned) {
            Failures.check("ibv_destroy_cq", LibIbverbs.ibv_destroy_cq(address));
        }
    }
}
