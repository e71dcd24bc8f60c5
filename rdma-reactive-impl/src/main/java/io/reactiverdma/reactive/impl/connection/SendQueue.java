package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import java.util.ArrayDeque;
import java.util.function.Function;

/**
 * The send side of one connection, owned by its poller thread: operations waiting, in order, for a
 * send-queue slot or (with credit flow control) a credit; posting them; their completions; cancellation;
 * and this side's credit updates to the peer, on their own reserved slot.
 *
 * <p>Not thread-safe: every method runs on the connection's poller thread. Signals to subscribers are made
 * from here, so user code may re-enter ({@link #submit} from a callback): a re-entrant call only queues, and
 * the loop already running posts it.
 */
final class SendQueue {
    private final String description;
    private final QueuePair qp;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final CompletionPoller poller;
    private final PollerClient client;
    private final FlowControl flow;
    private final ControlWords.Slot creditWord;
    private final int inlineLimit;
    private final EngineMetrics metrics;
    private final SendWorkRequests wr = new SendWorkRequests(1, 1);
    private final ArrayDeque<Operation> waiting = new ArrayDeque<>();
    /** Why operations are refused once the connection closes ("refused", "not posted", ...). */
    private final Function<String, ConnectionClosedException> closedError;
    private long peerCreditAddress;
    private int peerCreditRkey;
    /** Set once the peer's word may be written (its hello arrived: {@link CreditWordHandshake}). */
    private boolean peerCreditWordOpen;
    private boolean established;
    private boolean closed;
    private boolean draining;
    private boolean creditWaitRegistered;
    private int outstanding;

    SendQueue(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, PollerClient client, FlowControl flow, ControlWords.Slot creditWord,
            int inlineLimit, EngineMetrics metrics, Function<String, ConnectionClosedException> closedError) {
        this.description = description;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.poller = poller;
        this.client = client;
        this.flow = flow;
        this.creditWord = creditWord;
        this.inlineLimit = inlineLimit;
        this.metrics = metrics;
        this.closedError = closedError;
    }

    /** Where the peer's credit word is, once it may be written. */
    void peerCreditWord(long address, int rkey) {
        this.peerCreditAddress = address;
        this.peerCreditRkey = rkey;
        this.peerCreditWordOpen = true;
    }

    /** The connection is up: post what waited for it. */
    void established() {
        established = true;
        drain();
    }

    /** Work requests posted and not completed yet (user operations and credit updates). */
    int outstanding() {
        return outstanding;
    }

    int waitingCount() {
        return waiting.size();
    }

    /** Queues {@code op} and posts what can be posted; refused at once when the connection is closing. */
    void submit(Operation op) {
        if (closed) {
            op.fail(closedError.apply("refused"));
            return;
        }
        if (op.cancelled) {
            op.releaseHolds();
            return;
        }
        waiting.add(op);
        drain();
    }

    /**
     * The subscriber cancelled (or a {@code timeout} fired). Not posted yet: the operation leaves the queue
     * and drops its holds now, and what waited behind it may go. Posted: it stays pending, and its holds
     * are dropped only by its completion or flush, because the device may still read or write its buffer.
     */
    void cancel(Operation op) {
        if (waiting.remove(op)) {
            op.releaseHolds();
            drain();
        }
    }

    /** Posts waiting operations while slots and credits allow. */
    void drain() {
        if (draining) {
            return; // the loop below, further up this thread's stack, picks up what was added
        }
        draining = true;
        try {
            while (established && !closed && !waiting.isEmpty()) {
                Operation op = waiting.peek();
                if (op.cancelled) {
                    waiting.poll();
                    op.releaseHolds();
                    continue;
                }
                FlowControl.Blocked blocked = flow.blocked(op.consumesPeerReceive(), creditWord.incoming());
                if (blocked == FlowControl.Blocked.SLOT) {
                    return; // a send completion drains again
                }
                if (blocked == FlowControl.Blocked.CREDIT) {
                    if (!creditWaitRegistered) {
                        creditWaitRegistered = true;
                        metrics.creditsWaiting(1);
                        poller.awaitCredits(client);
                    }
                    return;
                }
                waiting.poll();
                post(op);
            }
        } finally {
            draining = false;
        }
    }

    /**
     * The poller re-reads credits for this connection while it waits for them: {@code STILL_WAITING} while
     * the head of the queue still needs a credit the peer has not granted; otherwise the wait ends (an
     * empty queue, a cancelled head, or a closed connection end it too, so the poller can sleep again).
     */
    int recheckCredits() {
        if (!creditWaitRegistered) {
            return CompletionPoller.DONE;
        }
        Operation head = waiting.peek();
        boolean stillBlocked = established && !closed && head != null && !head.cancelled
                && flow.blocked(head.consumesPeerReceive(), creditWord.incoming()) == FlowControl.Blocked.CREDIT;
        if (stillBlocked) {
            return CompletionPoller.STILL_WAITING;
        }
        creditWaitRegistered = false;
        metrics.creditsWaiting(-1);
        int before = waiting.size();
        drain();
        return waiting.size() < before ? CompletionPoller.PROGRESSED : CompletionPoller.DONE;
    }

    private void post(Operation op) {
        PendingOperation p = pending.acquire(target, op.type, op, -1, System.nanoTime());
        wr.clear();
        boolean inline = op.writeWorkRequest(wr, p.wrId(), inlineLimit);
        try {
            qp.postSend(wr);
        } catch (RuntimeException e) {
            pending.free(p);
            op.fail(new RdmaException(description + ": posting " + op.type + " failed: " + e.getMessage(), e));
            return;
        }
        flow.posted(op.consumesPeerReceive());
        outstanding++;
        metrics.outstanding(1);
        if (inline) {
            // The device copied the bytes at post time: the buffer is free now (the op keeps no hold).
            op.releaseHolds();
        }
    }

    /** A user operation's work request completed (or was flushed): its slot is free, its subscriber told. */
    void completed(Operation op, boolean success, boolean flushed, Throwable failure) {
        outstanding--;
        flow.sendCompleted();
        if (op != null) {
            if (success) {
                op.succeed();
            } else if (flushed) {
                op.fail(closedError.apply(op.type + " was flushed"));
            } else {
                op.fail(failure);
            }
        }
        drain();
    }

    /** A credit update completed (or was flushed): another may be sent. */
    void creditUpdateCompleted() {
        outstanding--;
        flow.advertisementCompleted();
    }

    /**
     * Writes the running total of posted receives to the peer when it is worth it (see {@link FlowControl}):
     * one update in flight at a time, on the slot reserved for it, as an 8-byte inline WRITE (the value is
     * copied at post time, so a later update never races the device reading an earlier one).
     */
    void maybeAdvertise() {
        if (!established || closed || !peerCreditWordOpen || !flow.shouldAdvertise()) {
            return;
        }
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, null, -1, System.nanoTime());
        wr.clear();
        int i = wr.add(p.wrId(), WrOpcode.RDMA_WRITE, SendFlags.SIGNALED | SendFlags.INLINE);
        wr.sge(i, creditWord.outgoing(flow.postedTotal()), 8, creditWord.lkey());
        wr.rdma(i, peerCreditAddress, peerCreditRkey);
        try {
            qp.postSend(wr);
        } catch (RuntimeException e) {
            pending.free(p);
            EngineLog.error(description + ": posting a credit update failed", e);
            return;
        }
        flow.advertising();
        outstanding++;
        metrics.outstanding(1);
    }

    /** The connection closes: nothing more is posted, and what waits fails now. */
    void close() {
        if (closed) {
            return;
        }
        closed = true;
        Operation op;
        while ((op = waiting.poll()) != null) {
            op.fail(closedError.apply("not posted"));
        }
        if (creditWaitRegistered) {
            creditWaitRegistered = false;
            metrics.creditsWaiting(-1);
        }
    }

    /**
     * The QP was destroyed without its flushes arriving (drain timeout, failed poller): fails what is still
     * pending as flushed. The device no longer touches the buffers, so dropping the holds is safe now.
     */
    void abandonPosted(PendingOperation p) {
        Operation op = (Operation) p.operation;
        OperationType type = p.type;
        long latencyNs = System.nanoTime() - p.postedNs;
        pending.free(p);
        outstanding--;
        metrics.outstanding(-1);
        metrics.completed(type, false, true, latencyNs, 0);
        if (type == OperationType.CREDIT_UPDATE) {
            flow.advertisementCompleted();
        } else {
            flow.sendCompleted();
            if (op != null) {
                op.fail(closedError.apply(type + " was abandoned with its queue pair"));
            }
        }
    }
}
