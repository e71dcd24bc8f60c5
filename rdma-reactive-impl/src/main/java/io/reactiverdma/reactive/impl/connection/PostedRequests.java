package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.OperationType;

import reactor.util.annotation.Nullable;

import java.util.function.Function;

/**
 * The send queue's posted requests not finished yet, in post order (a ring of the queue's capacity), and
 * how each is finished exactly once. RC completes a send queue in order, and a request that fails or is
 * flushed gives its own completion whether signalled or not, so a completion for entry X means: every entry
 * posted before X completed successfully and X has the completion's status ({@link #completed}). An entry
 * that never gets a completion (the QP was destroyed first) is abandoned ({@link #abandonAll}). Finishing an
 * entry frees its pending entry, gives back its slot (or the credit update's), counts it and signals what it
 * stood for: an {@link Operation}, a message of a {@link StreamingSend}, a credit update, or one of the
 * queue's own zero-length WRITEs ({@link #FENCE}, {@link #PROBE}).
 *
 * <p>A datagram endpoint's send queue keeps its posted requests here too, finished its own way
 * ({@link Finisher}): a UD send queue completes in order as well.
 *
 * <p>Not thread-safe: the owner's poller thread only.
 */
public final class PostedRequests {
    /** How an entry is finished (and its pending entry freed): the send queue's way by default. */
    @FunctionalInterface
    public interface Finisher {
        /** {@code e} ended: sent, failed ({@code failure}, or {@code flushed}), or {@code abandoned} with its QP. */
        void finish(PendingOperation e, boolean success, boolean flushed, @Nullable Throwable failure, boolean abandoned);
    }

    /** The operation of a fence entry (see {@code SendQueue.postFence}): it stands for nothing of the user's. */
    static final Object FENCE = new Object();
    /** The operation of an idle probe (see {@code SendQueue.probe}): it stands for nothing of the user's either. */
    static final Object PROBE = new Object();
    /** How an operation posted and never completed ends (see {@link #abandonAll()}). */
    private static final String ABANDONED = " was abandoned with its queue pair (destroyed before the operation's "
            + "completion came: it may have executed)";

    private final String description;
    private final PendingOperations pending;
    private final FlowControl flow;
    private final EngineMetrics metrics;
    /** Whether requests were timed when posted ({@code SendChain}: only for metrics). */
    private final boolean timed;
    private final Function<String, ConnectionClosedException> closedError;
    private final Finisher finisher;
    private final PendingOperation[] ring;
    private int head;
    private int count;

    PostedRequests(String description, int capacity, PendingOperations pending, FlowControl flow,
            EngineMetrics metrics, Function<String, ConnectionClosedException> closedError) {
        this(description, capacity, pending, flow, metrics, closedError, null);
    }

    /** A ring of {@code capacity} posted requests, each finished by {@code finisher}. */
    public PostedRequests(String description, int capacity, Finisher finisher) {
        this(description, capacity, null, null, null, null, finisher);
    }

    private PostedRequests(String description, int capacity, PendingOperations pending, FlowControl flow,
            EngineMetrics metrics, Function<String, ConnectionClosedException> closedError, @Nullable Finisher finisher) {
        this.description = description;
        this.ring = new PendingOperation[capacity];
        this.pending = pending;
        this.flow = flow;
        this.metrics = metrics;
        this.timed = metrics != EngineMetrics.NOOP;
        this.closedError = closedError;
        this.finisher = finisher != null ? finisher : this::finish;
    }

    /** Requests posted and not finished yet. */
    public int count() {
        return count;
    }

    /** {@code p} was posted (after every entry added before it). */
    public void add(PendingOperation p) {
        int at = head + count;
        ring[at >= ring.length ? at - ring.length : at] = p; // no division per request
        count++;
    }

    /** A completion for {@code p}: the entries before it succeeded, then {@code p} with the completion's outcome. */
    public void completed(PendingOperation p, boolean success, boolean flushed, @Nullable Throwable failure) {
        while (true) {
            if (count == 0) {
                throw new IllegalStateException(description + ": a send completion for a work request that is not "
                        + "posted (" + p.type + ")");
            }
            PendingOperation e = take();
            if (e == p) {
                finisher.finish(e, success, flushed, failure, false);
                return;
            }
            finisher.finish(e, true, false, null, false);
        }
    }

    /**
     * The QP was destroyed without the completions of what is still posted arriving (drain timeout, failed
     * poller, a refused chain whose unsignalled prefix nothing completes): each fails as abandoned, which
     * says that it may have executed (it was not flushed: a flush would have given its completion). The
     * device no longer touches the buffers, so dropping the holds is safe now.
     */
    public void abandonAll() {
        while (count > 0) {
            finisher.finish(take(), false, false, null, true);
        }
    }

    private PendingOperation take() {
        PendingOperation e = ring[head];
        ring[head] = null;
        head = head + 1 == ring.length ? 0 : head + 1;
        count--;
        return e;
    }

    /**
     * Frees the entry, counts it (unless {@code abandoned}: no completion came), and tells what it stood for.
     */
    private void finish(PendingOperation e, boolean success, boolean flushed, Throwable failure, boolean abandoned) {
        OperationType type = e.type;
        Object operation = e.operation;
        long latencyNs = timed ? System.nanoTime() - e.postedNs : 0;
        pending.free(e);
        metrics.outstanding(-1);
        if (operation == FENCE) {
            return;
        }
        if (operation == PROBE) {
            flow.sendCompleted();
            return;
        }
        if (type == OperationType.CREDIT_UPDATE) {
            if (!abandoned) {
                metrics.completed(type, success, flushed, latencyNs, 0);
            }
            flow.advertisementCompleted();
            return;
        }
        flow.sendCompleted();
        try {
            if (operation instanceof Operation op) {
                if (!abandoned) {
                    metrics.completed(type, success, flushed, latencyNs, success ? op.length() : 0);
                }
                if (success) {
                    op.succeed();
                } else {
                    op.fail(abandoned ? closedError.apply(op.type + ABANDONED)
                            : flushed ? closedError.apply(op.type + " was flushed") : failure);
                }
            } else if (operation instanceof StreamingSend s) {
                if (!abandoned) {
                    metrics.completed(type, success, flushed, latencyNs, success ? s.completedLength() : 0);
                }
                s.sent(success, abandoned ? closedError.apply("SEND of a stream" + ABANDONED)
                        : flushed ? closedError.apply("SEND of a stream was flushed") : failure);
            }
        } catch (RuntimeException userCode) {
            // A subscriber that threw: the ring walk must go on, or entries would be left half-finished.
            EngineLog.error(description + ": signalling the outcome of a " + type + " failed", userCode);
        }
    }
}
