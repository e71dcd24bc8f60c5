package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.connection.OwnerThread;
import io.reactiverdma.reactive.impl.connection.PostedRequests;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

import java.util.ArrayDeque;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The send side of a datagram endpoint, owned by its poller thread (asserted: {@link OwnerThread}), built as
 * a connection's: a send submitted only asks for a flush at the end of the poller's cycle, which posts every
 * waiting send the send queue has room for as one chain (one {@code ibv_post_send}); one request in {@code
 * SIGNAL_INTERVAL}, and the last of every chain, asks for a completion. A copied send is staged in one of
 * {@code SEND_QUEUE_DEPTH} registered slots; a registered buffer is posted as it is.
 *
 * <p>Every posted request is kept in post order, in the connection path's {@link PostedRequests}. A UD send
 * queue completes in order, and a request that fails or is flushed gives its own completion whether signalled
 * or not, so a completion for request X means: every request posted before X was sent, and X has the
 * completion's status. The last request of every chain is
 * signalled, so no unsignalled request is left without a later completion to end it. A refused chain fails the
 * refused requests and closes the endpoint, whose flush ends the ones posted before them.
 */
final class DatagramSender {
    private final String description;
    private final QueuePair qp;
    private final CompletionPoller poller;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final EngineMetrics metrics;
    private final EngineBuffer slab;
    private final int slotSize;
    private final int depth;
    private final int signalInterval;
    private final Runnable flushRequest;
    private final Consumer<Throwable> postFailed;
    private final Supplier<RdmaException> closedError;
    private final int[] freeSlots;
    private int freeSlotCount;
    private final ArrayDeque<DatagramSend> waiting = new ArrayDeque<>();
    private final SendWorkRequests chain;
    private final PendingOperation[] chainEntries;
    /** Posted and not finished, in post order. */
    private final PostedRequests posted;
    private int sinceSignal;
    private boolean closed;

    DatagramSender(String description, BufferPool pool, int depth, int slotSize, int signalInterval, QueuePair qp,
            CompletionPoller poller, PendingOperations pending, CompletionTarget target, EngineMetrics metrics,
            Runnable flushRequest, Consumer<Throwable> postFailed, Supplier<RdmaException> closedError) {
        this.description = description;
        this.poller = poller;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.metrics = metrics;
        this.depth = depth;
        this.slotSize = slotSize;
        this.signalInterval = signalInterval;
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        this.closedError = closedError;
        this.slab = (EngineBuffer) pool.allocateRegistered(depth * slotSize);
        this.freeSlots = new int[depth];
        for (int i = 0; i < depth; i++) {
            freeSlots[freeSlotCount++] = depth - 1 - i;
        }
        this.chain = new SendWorkRequests(depth, 1);
        this.chainEntries = new PendingOperation[depth];
        this.posted = new PostedRequests(description, depth, this::finishPosted);
    }

    /** Sends posted and not finished yet. */
    int outstanding() {
        return posted.count();
    }

    /** Queues {@code send} for the next flush (it holds its destination, and is refused if that is retired). */
    void submit(DatagramSend send) {
        assert OwnerThread.check(poller);
        if (closed) {
            send.refused(closedError.get());
        } else if (send.destination.isGroup() && send.destination.isRetired()) {
            send.refused(new InvalidRequestException(Reason.NOT_JOINED, "the group this datagram was addressed to was left"));
        } else {
            waiting.add(send);
            flushRequest.run();
        }
    }

    /** Posts the waiting sends the send queue has room for, as one chain; returns the requests posted. */
    int flush() {
        assert OwnerThread.check(poller);
        if (closed || waiting.isEmpty() || posted.count() == depth) {
            return 0;
        }
        chain.clear();
        long now = System.nanoTime();
        int n = 0;
        DatagramSend send;
        while (posted.count() + n < depth && (send = waiting.poll()) != null) {
            if (!stage(send)) {
                continue;
            }
            PendingOperation p = pending.acquire(target, send.type(), send, -1, now);
            int i = chain.add(p.wrId(), send.hasImmediate ? WrOpcode.SEND_WITH_IMM : WrOpcode.SEND, 0);
            if (send.buffer != null) {
                chain.sge(i, send.buffer.address(), send.length, send.buffer.lkey());
            } else {
                chain.sge(i, slab.address() + (long) send.slot * slotSize, send.length, slab.lkey());
            }
            if (send.hasImmediate) {
                chain.immData(i, send.immediate);
            }
            send.destination.target(chain, i);
            if (++sinceSignal >= signalInterval) {
                chain.addSendFlags(i, SendFlags.SIGNALED);
                sinceSignal = 0;
            }
            chainEntries[n++] = p;
        }
        if (n == 0) {
            return 0;
        }
        if (sinceSignal != 0) {
            chain.addSendFlags(n - 1, SendFlags.SIGNALED);
            sinceSignal = 0;
        }
        return post(n);
    }

    /** Its bytes into a free slot, or a hold on its registered buffer; false (and refused) when released. */
    private boolean stage(DatagramSend send) {
        if (send.buffer != null) {
            if (!send.buffer.retain()) {
                send.refused(EngineBuffer.released());
                return false;
            }
            send.holdsBuffer = true;
            return true;
        }
        send.slot = freeSlots[--freeSlotCount]; // a slot per request the queue has room for: never short
        slab.memory().put(slab.offset() + send.slot * slotSize, send.data);
        return true;
    }

    private int post(int n) {
        int accepted = n;
        RuntimeException refusal = null;
        try {
            qp.postSend(chain);
        } catch (PostRefusedException e) {
            accepted = Math.min(e.failedIndex(), n);
            refusal = e;
        } catch (RuntimeException e) {
            accepted = 0;
            refusal = e;
        }
        for (int k = 0; k < n; k++) {
            PendingOperation p = chainEntries[k];
            chainEntries[k] = null;
            if (k < accepted) {
                posted.add(p);
            } else {
                finish(p, false, new RdmaException(description + ": ibv_post_send refused a datagram: "
                        + refusal.getMessage(), refusal), false);
            }
        }
        if (refusal != null) {
            // Slots and the queue's room were accounted for: a device that refuses such a post cannot be
            // trusted with more. Closing flushes what it took (the posted requests before the refused one).
            closed = true;
            postFailed.accept(refusal);
        }
        return accepted;
    }

    /** A completion for {@code p}: the requests posted before it were sent, then {@code p} has {@code status}. */
    void completed(PendingOperation p, int status, int vendorErr) {
        assert OwnerThread.check(poller);
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        // A flush after the close is the close's doing: "closed", as for connections; else the device's status.
        Throwable failure = success ? null : closed && flushed ? closedError.get()
                : ((DatagramSend) p.operation).completionError(status, vendorErr);
        try {
            posted.completed(p, success, flushed, failure);
        } catch (IllegalStateException notPosted) {
            EngineLog.error(notPosted.getMessage(), null);
            return;
        }
        if (!waiting.isEmpty()) {
            flushRequest.run();
        }
    }

    /** How {@link #posted} finishes a request: sent, failed, or abandoned with the QP (failed as closed). */
    private void finishPosted(PendingOperation e, boolean success, boolean flushed, Throwable failure, boolean abandoned) {
        finish(e, success, abandoned ? closedError.get() : failure, true);
    }

    private void finish(PendingOperation e, boolean success, Throwable failure, boolean wasPosted) {
        DatagramSend send = (DatagramSend) e.operation;
        freeEntry(e, send);
        if (success) {
            send.succeeded(metrics);
        } else if (wasPosted) {
            send.failed(failure, metrics);
        } else {
            send.refused(failure);
        }
    }

    private void freeEntry(PendingOperation e, DatagramSend send) {
        pending.free(e);
        if (send.slot >= 0) {
            freeSlots[freeSlotCount++] = send.slot;
            send.slot = -1;
        }
    }

    /** The endpoint closes: waiting sends fail as closed; posted ones end with their flush. */
    void close() {
        assert OwnerThread.check(poller);
        closed = true;
        DatagramSend send;
        while ((send = waiting.poll()) != null) {
            send.refused(closedError.get());
        }
    }

    /** The poller failed: no completion will come; what is posted fails as closed. */
    void abandonPosted() {
        assert OwnerThread.check(poller);
        close();
        posted.abandonAll();
    }

    /** The QP is destroyed: the staging slots go. rdma_cm thread. */
    void releaseMemory() {
        slab.release();
    }
}
