package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import java.util.Arrays;

/**
 * The chain of send work requests one flush builds and posts with one {@code ibv_post_send}: each request
 * appended with its pending entry (so its buffer hold and {@code wr_id}), one in {@code SIGNAL_INTERVAL} and
 * the last of the chain signalled, the requests the device took moved to {@link PostedRequests}, and those
 * it refused ({@code bad_wr} at index k: k and every request after it) given back and failed, typed. A
 * refusal that leaves an unsignalled prefix posted is ended by a signalled zero-length WRITE (the fence), so
 * the prefix still gets a completion. The chain is empty after every {@link #post}: a stale request is never
 * posted by a later flush.
 *
 * <p>Not thread-safe: the connection's poller thread only (see {@link SendQueue}).
 */
final class SendChain {
    /** Told when a post was refused: {@code postedWillComplete} false when what was posted never completes. */
    interface RefusalListener {
        void chainRefused(RdmaException refusal, boolean postedWillComplete);
    }

    private final String description;
    private final QueuePair qp;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final FlowControl flow;
    private final ControlWords.Slot creditWord;
    private final int inlineLimit;
    private final int signalInterval;
    private final EngineMetrics metrics;
    /**
     * Whether the latency of requests is measured: only for metrics (a clock read per request costs about
     * 20 ns on the host, and more under virtualisation, on a path that aims at 100 ns per message).
     */
    private final boolean timed;
    private final PostedRequests posted;
    private final RefusalListener refusals;
    /** The work requests: at most every slot plus the credit update's. */
    private final SendWorkRequests chain;
    /** The pending entry of each request in {@link #chain}. */
    private final PendingOperation[] entries;
    /** Whether each request in {@link #chain} is inline (its buffer is free once posted). */
    private final boolean[] inline;
    /** Requests added since the last signalled one. */
    private int sinceSignal;

    SendChain(SendQueue.Wiring w, PostedRequests posted, RefusalListener refusals) {
        this.description = w.description();
        this.qp = w.qp();
        this.pending = w.pending();
        this.target = w.target();
        this.flow = w.flow();
        this.creditWord = w.creditWord();
        this.inlineLimit = w.inlineLimit();
        this.signalInterval = w.signalInterval();
        this.metrics = w.metrics();
        this.timed = metrics != EngineMetrics.NOOP;
        this.posted = posted;
        this.refusals = refusals;
        int capacity = w.sendDepth() + 1;
        this.chain = new SendWorkRequests(capacity, 1);
        this.entries = new PendingOperation[capacity];
        this.inline = new boolean[capacity];
    }

    /** Appends {@code op}'s work request (its slot and, if it consumes a peer receive, its credit taken). */
    void appendOperation(Operation op) {
        PendingOperation p = pending.acquire(target, op.type, op, -1, now());
        flow.posted(op.consumesPeerReceive());
        int before = chain.count();
        boolean isInline;
        try {
            isInline = op.writeWorkRequest(chain, p.wrId(), inlineLimit);
        } catch (RuntimeException e) {
            unwritten(p, before, e);
            throw e;
        }
        added(p, isInline);
    }

    /** Appends the next staged message of {@code s} as a SEND. */
    void appendStreamMessage(StreamingSend s) {
        PendingOperation p = pending.acquire(target, OperationType.SEND, s, -1, now());
        flow.posted(true);
        int before = chain.count();
        boolean isInline;
        try {
            isInline = s.writeNext(chain, p.wrId(), inlineLimit);
        } catch (RuntimeException e) {
            unwritten(p, before, e);
            throw e;
        }
        added(p, isInline);
    }

    /**
     * Appends the idle probe: a zero-length RDMA WRITE (no SGE, so no rkey or address is checked: IBA
     * C9-88) that takes a slot like any WRITE but no credit.
     */
    void appendProbe() {
        PendingOperation p = pending.acquire(target, OperationType.WRITE, PostedRequests.PROBE, -1, now());
        flow.posted(false);
        chain.add(p.wrId(), WrOpcode.RDMA_WRITE, 0);
        added(p, false);
    }

    /**
     * Appends the credit update: the running total of posted receives as an 8-byte inline WRITE to the
     * peer's credit word, on the slot reserved for it (the value is copied at post time, so a later update
     * never races the device reading an earlier one).
     */
    void appendCreditUpdate(long peerAddress, int peerRkey) {
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, null, -1, now());
        int i = chain.add(p.wrId(), WrOpcode.RDMA_WRITE, SendFlags.INLINE);
        chain.sge(i, creditWord.outgoing(flow.advertising()), 8, creditWord.lkey());
        chain.rdma(i, peerAddress, peerRkey);
        added(p, true);
    }

    /**
     * Writing {@code p}'s work request threw: if it got into the chain, it is refused with the chain (see
     * {@link #post}); otherwise it is refused here, so its entry, slot and credit come back either way.
     */
    private void unwritten(PendingOperation p, int before, RuntimeException e) {
        if (chain.count() > before) {
            entries[before] = p;
            inline[before] = false;
        } else {
            refused(p, new RdmaException(description + ": writing a " + p.type + " work request failed: "
                    + e.getMessage(), e));
        }
    }

    /** The request just added to the chain: signalled when its turn in the interval came. */
    private void added(PendingOperation p, boolean isInline) {
        int i = chain.count() - 1;
        entries[i] = p;
        inline[i] = isInline;
        if (++sinceSignal >= signalInterval) {
            chain.addSendFlags(i, SendFlags.SIGNALED);
            sinceSignal = 0;
        }
    }

    /**
     * Posts the chain in one call (its last request signalled); returns the requests the device took.
     * {@code buildFailure}: building the chain threw, so none of it is posted (each request in it is refused
     * with that failure, as if the device had refused the chain at its first request). A refusal is reported
     * to the {@link RefusalListener} after the refused requests were given back.
     */
    int post(RuntimeException buildFailure) {
        int n = chain.count();
        if (n == 0 && buildFailure == null) {
            return 0;
        }
        int accepted = 0;
        RdmaException refusal = null;
        boolean prefixUnsignalled = false;
        try {
            RuntimeException failure = buildFailure;
            if (failure == null) {
                chain.addSendFlags(n - 1, SendFlags.SIGNALED);
                accepted = n;
                try {
                    qp.postSend(chain);
                } catch (PostRefusedException e) {
                    accepted = Math.max(0, Math.min(e.failedIndex(), n));
                    failure = e;
                } catch (RuntimeException e) {
                    accepted = 0;
                    failure = e;
                }
            }
            sinceSignal = 0;
            for (int k = 0; k < accepted; k++) {
                PendingOperation p = entries[k];
                posted.add(p);
                if (inline[k] && p.operation instanceof Operation op) {
                    // The device copied the bytes at post time: the buffer is free now (the op keeps no hold).
                    op.releaseHolds();
                }
            }
            if (accepted > 0) {
                metrics.outstanding(accepted);
            }
            if (buildFailure != null) {
                refusal = new RdmaException(description + ": building a chain of " + n + " work requests failed ("
                        + buildFailure + "); none was posted", buildFailure);
            } else if (failure != null && accepted == n) {
                // a refusal that did not say where (no bad_wr, as rxe's failed doorbell): the device took all
                refusal = new RdmaException(description + ": ibv_post_send failed for a chain of " + n + " ("
                        + failure.getMessage() + ") without saying which request it refused: all " + n
                        + " count as posted", failure);
            } else if (failure != null) {
                refusal = new RdmaException(description + ": ibv_post_send refused work request " + accepted
                        + " of a chain of " + n + " (" + failure.getMessage() + "); it and the " + (n - accepted - 1)
                        + " after it were not posted", failure);
            }
            prefixUnsignalled = refusal != null && accepted > 0
                    && (chain.sendFlags(accepted - 1) & SendFlags.SIGNALED) == 0;
            for (int k = accepted; k < n; k++) {
                PendingOperation p = entries[k];
                entries[k] = null;
                if (p != null) {
                    refused(p, refusal);
                }
            }
        } finally {
            Arrays.fill(entries, 0, n, null);
            chain.clear();
        }
        if (refusal != null) {
            // An unsignalled prefix that no fence ends would never complete: then close at once, and the
            // close's drain timeout abandons it (it executed, or may have: see PostedRequests.abandonAll).
            refusals.chainRefused(refusal, !prefixUnsignalled || postFence());
        }
        return accepted;
    }

    /**
     * The device took a chain only up to an unsignalled request: nothing would ever complete those
     * requests, so a signalled zero-length RDMA WRITE follows them (no SGE, so no rkey or address is checked:
     * IBA C9-88); its completion, success or flush, ends them in order. It uses the slot of a refused
     * request. Returns false when the device refused even that.
     */
    private boolean postFence() {
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, PostedRequests.FENCE, -1, now());
        chain.add(p.wrId(), WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
        try {
            qp.postSend(chain);
            posted.add(p);
            metrics.outstanding(1);
            return true;
        } catch (RuntimeException e) {
            pending.free(p);
            EngineLog.warn(description + ": the zero-length WRITE that ends a partly refused chain was refused too ("
                    + e.getMessage() + "); closing now, its posted requests end with the close");
            return false;
        } finally {
            chain.clear();
        }
    }

    /** When a request is posted, for its latency; 0 when nothing measures it. */
    private long now() {
        return timed ? System.nanoTime() : 0;
    }

    /** A request of a refused chain: never posted, so its slot, credit and pending entry come back. */
    private void refused(PendingOperation p, RdmaException error) {
        OperationType type = p.type;
        Object operation = p.operation;
        pending.free(p);
        try {
            if (type == OperationType.CREDIT_UPDATE) {
                flow.advertisementCompleted();
            } else if (operation == PostedRequests.PROBE) {
                flow.refused(false);
            } else if (operation instanceof Operation op) {
                flow.refused(op.consumesPeerReceive());
                op.fail(error);
            } else if (operation instanceof StreamingSend s) {
                flow.refused(true);
                s.refused(error);
            }
        } catch (RuntimeException userCode) {
            // A subscriber that threw: the other refused requests must still be failed and the chain cleared.
            EngineLog.error(description + ": signalling the refusal of a " + type + " failed", userCode);
        }
    }
}
