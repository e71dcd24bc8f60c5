package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.HandOffTask;
import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;

/**
 * One send-queue operation from subscription to signal: what to post, the buffers it holds, and its
 * subscriber, whose {@code Subscription} it is (see {@link OperationMono}). Holds are taken when it is made
 * and dropped exactly once ({@link #releaseHolds()}), after its completion or flush, or when it is refused or
 * cancelled before being posted. It is its own hand-off task: handing it to the poller allocates nothing.
 *
 * <p>A send's fields are all it has (48 bytes with compressed references: its length is its buffer's, its
 * immediate data only in the subclass of a send with immediate); the other kinds add theirs in subclasses. Made by the named factories ({@link #send}, {@link #oneSided}, {@link #atomic}, {@link #bind},
 * {@link #invalidate}). A send or a one-sided operation completes empty; an atomic emits the remote word's
 * previous value and a bind its region ({@link ValueOperation}, which waits for the subscriber's request).
 * One completion path for all: {@link #succeed()} or {@link #fail}, the first of them signals.
 */
public class Operation extends HandOffTask implements Subscription {
    private static final byte OWNS_LOCAL = 1;
    private static final byte SUCCEEDED = 2;
    private static final byte HOLDS_RELEASED = 4;
    private static final byte SIGNALLED = 8;
    /** A send of no bytes: the engine's copy is one byte (a pool hands out none smaller), the message none. */
    private static final byte EMPTY = 16;

    final OperationType type;
    /** The queue the operation goes to: {@link #run()} submits it there, on the connection's poller thread. */
    private final SendQueue queue;
    /** The local data (source of a send/WRITE, target of a READ, atomic result word); held. Null for windows. */
    final EngineBuffer local;
    /** Set before the operation is handed over; signalled on the poller thread (or the requester's). */
    CoreSubscriber<Object> subscriber;
    /**
     * What the subscriber holds the connection by (a client's {@link ConnectionHandle}): referenced here so
     * it stays reachable while its operation is queued or posted, and is not taken for dropped.
     */
    @SuppressWarnings("unused")
    private Object owner;
    volatile boolean cancelled;
    /** {@link #OWNS_LOCAL}, {@link #SUCCEEDED}, {@link #HOLDS_RELEASED}, {@link #SIGNALLED} (poller thread). */
    private byte flags;
    // ---- the links of WaitingOperations (poller thread only)
    boolean waiting;
    Operation previousWaiting;
    Operation nextWaiting;

    /**
     * @param length all of {@code local} (its {@code length()}), or 0 for a message of no bytes; {@code local}
     *               null (a window's operation): 0
     */
    Operation(SendQueue queue, OperationType type, EngineBuffer local, boolean ownsLocal, int length) {
        this.queue = queue;
        this.type = type;
        this.local = local;
        byte f = ownsLocal ? OWNS_LOCAL : 0;
        int all = local == null ? 0 : local.length();
        if (length == 0 && all != 0) {
            f |= EMPTY;
        } else if (length != all) {
            throw new IllegalArgumentException("an operation covers all of its buffer (" + all + " B) or none, not "
                    + length + " B");
        }
        this.flags = f;
    }

    /** The bytes the operation sends, writes or reads (its buffer's length; 0 for a message of no bytes). */
    final int length() {
        return local == null || (flags & EMPTY) != 0 ? 0 : local.length();
    }

    /**
     * A SEND or SEND_WITH_IMMEDIATE of {@code length} bytes of {@code local} (held; released too when
     * {@code owned}: the engine's copy of the caller's bytes).
     */
    static Operation send(SendQueue queue, OperationType type, EngineBuffer local, boolean owned, int length,
            int immediate) {
        if (type != OperationType.SEND && type != OperationType.SEND_WITH_IMMEDIATE) {
            throw new IllegalArgumentException("not a send: " + type);
        }
        return type == OperationType.SEND ? new Operation(queue, type, local, owned, length)
                : new ImmediateSend(queue, type, local, owned, length, immediate);
    }

    /** A SEND_WITH_IMMEDIATE: a send and its immediate data. */
    private static final class ImmediateSend extends Operation {
        private final int immediate;

        ImmediateSend(SendQueue queue, OperationType type, EngineBuffer local, boolean owned, int length,
                int immediate) {
            super(queue, type, local, owned, length);
            this.immediate = immediate;
        }

        @Override
        boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
            boolean inline = super.writeWorkRequest(wr, wrId, inlineLimit);
            wr.immData(wr.count() - 1, immediate);
            return inline;
        }
    }

    /** An RDMA WRITE, WRITE_WITH_IMMEDIATE or READ of all of {@code local} (held) to or from {@code remote}. */
    static Operation oneSided(SendQueue queue, OperationType type, EngineBuffer local, RemoteRegion remote,
            int immediate) {
        return new OneSidedOperation(queue, type, local, remote, immediate);
    }

    /**
     * A COMPARE_AND_SWAP or FETCH_AND_ADD on the 8-byte {@code remote} word; {@code result} (the engine's own,
     * held) receives its previous value, which the operation emits.
     */
    static Operation atomic(SendQueue queue, OperationType type, EngineBuffer result, RemoteRegion remote,
            long compareAdd, long swap) {
        return new AtomicOperation(queue, type, result, remote, compareAdd, swap);
    }

    /** Binds {@code window} to its buffer; emits the window (the exposed region) once bound. */
    static Operation bind(SendQueue queue, ExposedWindow window) {
        return new WindowOperation(queue, OperationType.BIND_WINDOW, window);
    }

    /** Invalidates {@code window}'s rkey; completes empty. */
    static Operation invalidate(SendQueue queue, ExposedWindow window) {
        return new WindowOperation(queue, OperationType.INVALIDATE_WINDOW, window);
    }

    /** Whether an operation of {@code type} consumes one of the peer's posted receives (so one credit). */
    static boolean consumesPeerReceive(OperationType type) {
        return type == OperationType.SEND || type == OperationType.SEND_WITH_IMMEDIATE
                || type == OperationType.WRITE_WITH_IMMEDIATE;
    }

    /** Subscribes {@code s}: this is its subscription. Before the operation is handed over. */
    @SuppressWarnings("unchecked")
    void subscribe(CoreSubscriber<?> s) {
        this.subscriber = (CoreSubscriber<Object>) s;
        s.onSubscribe(this);
    }

    /** Nothing to request: the operation runs once subscribed, and completes empty. */
    @Override
    public void request(long n) {
    }

    /**
     * The subscriber cancelled (or a {@code timeout} fired), any thread: the queue drops the operation if it
     * is not posted yet; a posted one keeps its holds until the device is done with it.
     */
    @Override
    public void cancel() {
        if (!cancelled) {
            cancelled = true;
            queue.poller().run(() -> queue.cancel(this));
        }
    }

    Operation owner(Object owner) {
        this.owner = owner;
        return this;
    }

    /** The hand-over task: queues the operation on its connection's poller thread. */
    @Override
    public void run() {
        queue.submit(this);
    }

    /** True for the operations that consume one of the peer's posted receives (so one credit). */
    boolean consumesPeerReceive() {
        return consumesPeerReceive(type);
    }

    /**
     * Adds this operation's work request to {@code wr} (unsignalled: the send queue decides which requests
     * of a chain are signalled; inline when it has 1..{@code inlineLimit} bytes) and returns whether it is
     * inline: then the device copies the bytes at post time and the buffer is free once the post returned.
     * Here a SEND or SEND_WITH_IMM (whose subclass adds the immediate data); the other kinds write their own.
     */
    boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
        int length = length();
        boolean inline = length <= inlineLimit && length > 0;
        int i = wr.add(wrId, type == OperationType.SEND_WITH_IMMEDIATE ? WrOpcode.SEND_WITH_IMM : WrOpcode.SEND,
                inline ? SendFlags.INLINE : 0);
        if (length > 0) {
            wr.sge(i, local.address(), length, local.lkey());
        }
        return inline;
    }

    /** Drops the buffer holds; idempotent (the first call wins). */
    final void releaseHolds() {
        if ((flags & HOLDS_RELEASED) != 0) {
            return;
        }
        flags |= HOLDS_RELEASED;
        dropHolds((flags & SUCCEEDED) != 0);
    }

    /** What {@link #releaseHolds()} drops: the local buffer's hold (and the buffer, when the engine owns it). */
    void dropHolds(boolean succeeded) {
        if (local != null) {
            local.unretain();
            if ((flags & OWNS_LOCAL) != 0) {
                local.release();
            }
        }
    }

    /** What the operation emits on success, read before the holds are dropped; null: it completes empty. */
    Object result() {
        return null;
    }

    /** Signals {@code value} (null: completes empty). Poller thread. */
    void complete(Object value) {
        subscriber.onComplete();
    }

    /**
     * Signals success (the result read before the holds are dropped). A cancelled operation only drops its
     * holds: its subscriber is gone, and this is the completion the holds waited for.
     */
    public final void succeed() {
        if ((flags & SIGNALLED) != 0) {
            return;
        }
        flags |= SIGNALLED | SUCCEEDED;
        if (cancelled) {
            releaseHolds();
            return;
        }
        Object value = result();
        releaseHolds();
        complete(value);
    }

    /** Signals the failure (a cancelled operation only drops its holds: nobody would see the error). */
    public final void fail(Throwable error) {
        if ((flags & SIGNALLED) != 0) {
            return;
        }
        flags |= SIGNALLED;
        releaseHolds();
        if (!cancelled) {
            subscriber.onError(error);
        }
    }
}
