package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.MonoSink;

/**
 * One send-queue operation from subscription to signal: what to post, the buffers it holds, and the sink
 * to signal. Holds are taken when it is created and dropped exactly once ({@link #releaseHolds()}), after
 * its completion or flush, or when it is refused or cancelled before being posted.
 */
public final class Operation implements Runnable, Subscription {
    final OperationType type;
    /** Where an atomic's result goes (null for the operations of an {@link OperationMono}). */
    final MonoSink<Object> sink;
    /** The subscriber of an {@link OperationMono}: this operation is its subscription (null with a sink). */
    private CoreSubscriber<? super Void> subscriber;
    /** The local data (source of a send/WRITE, target of a READ, atomic result word); held. */
    final EngineBuffer local;
    /** Whether the local buffer is the engine's own copy (released, not just unheld, when done). */
    final boolean ownsLocal;
    final int length;
    final long remoteAddress;
    final int rkey;
    final long compareAdd;
    final long swap;
    final int immediate;
    /** The queue the operation goes to: {@link #run()} submits it there, on the connection's poller thread. */
    private final SendQueue queue;
    /**
     * What the subscriber holds the connection by (a client's {@link ConnectionHandle}): referenced here so
     * it stays reachable while its operation is queued or posted, and is not taken for dropped.
     */
    @SuppressWarnings("unused")
    private Object owner;
    volatile boolean cancelled;
    /** The window a BIND_WINDOW or INVALIDATE_WINDOW works on; null for the other operations. */
    private ExposedWindow window;
    private boolean succeeded;
    private boolean holdsReleased;
    private boolean signalled;
    // ---- the links of WaitingOperations (poller thread only)
    boolean waiting;
    Operation previousWaiting;
    Operation nextWaiting;

    public Operation(SendQueue queue, OperationType type, MonoSink<Object> sink, EngineBuffer local, boolean ownsLocal,
            int length, long remoteAddress, int rkey, long compareAdd, long swap, int immediate) {
        this.queue = queue;
        this.type = type;
        this.sink = sink;
        this.local = local;
        this.ownsLocal = ownsLocal;
        this.length = length;
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        this.compareAdd = compareAdd;
        this.swap = swap;
        this.immediate = immediate;
    }

    void subscriber(CoreSubscriber<? super Void> s) {
        this.subscriber = s;
    }

    /** Nothing to request: the operation runs once subscribed, and a {@code Mono<Void>} emits no value. */
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

    /** Makes this the bind or the invalidation of {@code w}. */
    Operation window(ExposedWindow w) {
        this.window = w;
        return this;
    }

    /**
     * The hand-over task: queues the operation on its connection's poller thread. Being its own task, it
     * needs no lambda; the poller's queue still allocates a node per hand-over from another thread.
     */
    @Override
    public void run() {
        queue.submit(this);
    }

    /** True for the operations that consume one of the peer's posted receives (so one credit). */
    boolean consumesPeerReceive() {
        return type == OperationType.SEND || type == OperationType.SEND_WITH_IMMEDIATE
                || type == OperationType.WRITE_WITH_IMMEDIATE;
    }

    /**
     * Adds this operation's work request to {@code wr} (unsignalled: the send queue decides which requests
     * of a chain are signalled; inline when it is a SEND, SEND_WITH_IMM or WRITE of 1..{@code inlineLimit}
     * bytes) and returns whether it is inline: then the device copies the bytes at post time and the buffer
     * is free once the post returned.
     */
    boolean writeWorkRequest(SendWorkRequests wr, long wrId, int inlineLimit) {
        if (window != null) {
            window.writeWorkRequest(type, wr, wrId);
            return false;
        }
        WrOpcode opcode = switch (type) {
            case SEND -> WrOpcode.SEND;
            case SEND_WITH_IMMEDIATE -> WrOpcode.SEND_WITH_IMM;
            case WRITE -> WrOpcode.RDMA_WRITE;
            case WRITE_WITH_IMMEDIATE -> WrOpcode.RDMA_WRITE_WITH_IMM;
            case READ -> WrOpcode.RDMA_READ;
            case COMPARE_AND_SWAP -> WrOpcode.ATOMIC_CMP_AND_SWP;
            case FETCH_AND_ADD -> WrOpcode.ATOMIC_FETCH_AND_ADD;
            default -> throw new IllegalStateException("not a send-queue operation: " + type);
        };
        boolean inline = (type == OperationType.SEND || type == OperationType.SEND_WITH_IMMEDIATE
                || type == OperationType.WRITE) && length <= inlineLimit && length > 0;
        int i = wr.add(wrId, opcode, inline ? SendFlags.INLINE : 0);
        if (length > 0) {
            wr.sge(i, local.address(), length, local.lkey());
        }
        switch (type) {
            case SEND_WITH_IMMEDIATE -> wr.immData(i, immediate);
            case WRITE, READ -> wr.rdma(i, remoteAddress, rkey);
            case WRITE_WITH_IMMEDIATE -> wr.rdma(i, remoteAddress, rkey).immData(i, immediate);
            case COMPARE_AND_SWAP, FETCH_AND_ADD -> wr.atomic(i, remoteAddress, rkey, compareAdd, swap);
            default -> {
            }
        }
        return inline;
    }

    boolean isAtomic() {
        return type == OperationType.COMPARE_AND_SWAP || type == OperationType.FETCH_AND_ADD;
    }

    /** The atomic's result: the remote word's previous value, which the device wrote to the local word. */
    long atomicResult() {
        return local.memory().getLong(local.offset());
    }

    /** True the first time only: an operation is signalled once (a late second outcome is ignored). */
    private boolean firstSignal() {
        if (signalled) {
            return false;
        }
        signalled = true;
        return true;
    }

    /** Drops the buffer holds; idempotent (the first call wins). */
    void releaseHolds() {
        if (holdsReleased) {
            return;
        }
        holdsReleased = true;
        if (window != null) {
            window.operationDone(type, succeeded, cancelled);
        }
        if (local != null) {
            local.unretain();
            if (ownsLocal) {
                local.release();
            }
        }
    }

    /**
     * Signals success: the atomic's previous value is read before its result word is released. A cancelled
     * operation only drops its holds: its subscriber is gone, and this is the completion the holds waited for.
     */
    public void succeed() {
        if (!firstSignal()) {
            return;
        }
        succeeded = true;
        if (cancelled) {
            releaseHolds();
        } else if (isAtomic()) {
            long previous = atomicResult();
            releaseHolds();
            sink.success(previous);
        } else {
            releaseHolds();
            if (subscriber != null) {
                subscriber.onComplete();
            } else {
                sink.success(type == OperationType.BIND_WINDOW ? window : null); // a bind emits its region
            }
        }
    }

    /** Signals the failure (a cancelled operation only drops its holds: nobody would see the error). */
    public void fail(Throwable error) {
        if (!firstSignal()) {
            return;
        }
        releaseHolds();
        if (!cancelled) {
            if (subscriber != null) {
                subscriber.onError(error);
            } else {
                sink.error(error);
            }
        }
    }
}
