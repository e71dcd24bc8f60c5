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
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import java.util.ArrayList;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The send side of one connection, owned by its poller thread: operations and streams waiting, in order,
 * for a send-queue slot or (with credit flow control) a credit; posting them; their completions;
 * cancellation; and this side's credit updates to the peer, on their own reserved slot.
 *
 * <h2>Doorbell batching</h2> Nothing is posted when it is submitted: {@link #submit}, a stream with new
 * messages, a freed slot or a new credit only ask the poller for a {@link #flush()} at the end of its duty
 * cycle. The flush posts everything that is ready then (the credit update first, then waiting operations,
 * then streams' messages, while slots and credits allow) as one chain: one {@code ibv_post_send}. A refused
 * chain ({@code bad_wr} at index k) fails exactly the requests from k on, typed, and closes the connection
 * once the requests before k, which were posted, have completed like any other (a device that refuses a
 * post whose slots and credits were accounted for cannot be trusted with more; closing at once would flush
 * the requests it took).
 *
 * <h2>Selective signalling</h2> One request in {@code SIGNAL_INTERVAL}, and the last of every chain, asks
 * for a completion. Every posted request is kept in {@link #posted}, in post order, with its own pending
 * entry (so its buffer hold and its {@code wr_id}). RC completes a send queue in order, and a request that
 * fails or is flushed gives its own completion whether signalled or not, so a completion for entry X means:
 * every entry posted before X completed successfully (it gave no completion of its own) and X has the
 * completion's status. Each entry is finished exactly once, when it leaves the ring; a buffer is released
 * only then (or at post time for inline data, which the device copied). Because the last request of every
 * chain is signalled, no unsignalled request is ever left without a later completion to end it.
 *
 * <p>Not thread-safe: every method runs on the connection's poller thread. Signals to subscribers are made
 * from here, so user code may re-enter ({@link #submit} from a callback): that only queues, and asks for
 * another flush.
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
    private final int signalInterval;
    private final EngineMetrics metrics;
    /** The chain being built: at most every slot plus the credit update's. */
    private final SendWorkRequests chain;
    /** The pending entry of each request in {@link #chain}. */
    private final PendingOperation[] chainEntries;
    /** Whether each request in {@link #chain} is inline (its buffer is free once posted). */
    private final boolean[] chainInline;
    /** Posted requests not finished yet, in post order. */
    private final PostedRequests posted;
    /** Requests added since the last signalled one. */
    private int sinceSignal;
    private final WaitingOperations waiting = new WaitingOperations();
    /** Live streams (until they end), whose staged messages are served in turn after the waiting operations. */
    private final ArrayList<StreamingSend> streams = new ArrayList<>();
    private int streamTurn;
    /** Asks the poller for a {@link #flush()} at the end of its cycle. */
    private final Runnable flushRequest;
    /** A refused post: the connection cannot go on. */
    private final Consumer<Throwable> postFailed;
    /** Why operations are refused once the connection closes ("refused", "not posted", ...). */
    private final Function<String, ConnectionClosedException> closedError;
    private long peerCreditAddress;
    private int peerCreditRkey;
    /** Set once the peer's word may be written (its hello arrived: {@link CreditWordHandshake}). */
    private boolean peerCreditWordOpen;
    private boolean established;
    private boolean closed;
    /**
     * A chain was refused: nothing more is posted, and the connection closes once what the device took
     * has completed (closing at once would flush the requests before {@code bad_wr}, which the device took).
     */
    private RdmaException refusedWith;
    private boolean creditWaitRegistered;
    /** {@link IdleProbe} asked for a probe: the next flush with a free slot posts it. */
    private boolean probeDue;

    SendQueue(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, PollerClient client, FlowControl flow, ControlWords.Slot creditWord,
            int inlineLimit, int sendDepth, int signalInterval, EngineMetrics metrics, Runnable flushRequest,
            Consumer<Throwable> postFailed, Function<String, ConnectionClosedException> closedError) {
        this.description = description;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.poller = poller;
        this.client = client;
        this.flow = flow;
        this.creditWord = creditWord;
        this.inlineLimit = inlineLimit;
        this.signalInterval = signalInterval;
        this.metrics = metrics;
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        this.closedError = closedError;
        int capacity = sendDepth + 1;
        this.chain = new SendWorkRequests(capacity, 1);
        this.chainEntries = new PendingOperation[capacity];
        this.chainInline = new boolean[capacity];
        this.posted = new PostedRequests(description, capacity, pending, flow, metrics, closedError);
    }

    CompletionPoller poller() {
        return poller;
    }

    /** Where the peer's credit word is, once it may be written: the next flush may write it. */
    void peerCreditWord(long address, int rkey) {
        this.peerCreditAddress = address;
        this.peerCreditRkey = rkey;
        this.peerCreditWordOpen = true;
        flushRequest.run();
    }

    /** The connection is up: what waited for it is posted by the next flush. */
    void established() {
        established = true;
        flushRequest.run();
    }

    /** Work requests posted and not finished yet (user operations, stream messages and credit updates). */
    int outstanding() {
        return posted.count();
    }

    int waitingCount() {
        return waiting.size();
    }

    /** Queues {@code op} for the next flush; refused at once when the connection is closing. */
    void submit(Operation op) {
        if (closed) {
            op.fail(refusedWith != null ? refusedWith : closedError.apply("refused"));
            return;
        }
        if (op.cancelled) {
            op.releaseHolds();
            return;
        }
        waiting.add(op);
        flushRequest.run();
    }

    /**
     * The subscriber cancelled (or a {@code timeout} fired). Not posted yet: the operation leaves the queue
     * (in O(1): see {@link WaitingOperations}) and drops its holds now, and what waited behind it may go.
     * Posted: it stays pending, and its holds are dropped only when it leaves the ring, because the device
     * may still read or write its buffer.
     */
    void cancel(Operation op) {
        if (waiting.remove(op)) {
            op.releaseHolds();
            flushRequest.run();
        }
    }

    /** {@code stream} has staged messages or free slots: listed (until it ends), it is served by the next flush. */
    void streamReady(StreamingSend stream) {
        if (closed) {
            stream.fail(refusedWith != null ? refusedWith : closedError.apply("not posted"));
            return;
        }
        if (!stream.queued) {
            stream.queued = true;
            streams.add(stream);
        }
        flushRequest.run();
    }

    /**
     * Poller thread, at the end of a duty cycle: streams ask their upstream for what their free slots
     * allow, then the credit update (when due), waiting operations and staged stream messages are posted
     * as one chain. Returns the requests posted.
     */
    int flush() {
        if (!established || closed) {
            return 0;
        }
        for (int i = 0; i < streams.size(); i++) {
            StreamingSend s = streams.get(i);
            try {
                s.requestMore(); // may stage messages at once (an upstream on this thread)
            } catch (RuntimeException e) {
                // Reactive Streams rule 3.16: request() returns normally. A publisher that throws fails its
                // own stream (which leaves the list), not every flush of the connection from now on.
                s.fail(new RdmaException(description + ": the publisher of a send(Publisher) threw from "
                        + "request(n): " + e.getMessage(), e));
                i--;
            }
        }
        try {
            appendCreditUpdate();
            appendReady();
            appendProbe();
        } catch (RuntimeException e) {
            // Nothing half-built may stay in the chain for the next flush: what was added is not posted.
            return postChain(e);
        }
        return postChain(null);
    }

    /** Adds waiting operations, then stream messages in turn, while slots and credits allow. */
    private void appendReady() {
        while (!closed) {
            Operation op = waiting.peek();
            if (op != null) {
                if (op.cancelled) {
                    waiting.poll();
                    op.releaseHolds();
                    continue;
                }
                if (blocked(op.consumesPeerReceive())) {
                    return;
                }
                waiting.poll();
                appendOperation(op);
                continue;
            }
            StreamingSend s = nextStream();
            if (s == null || blocked(true)) {
                return;
            }
            appendStreamMessage(s);
        }
    }

    /**
     * {@link IdleProbe}: the connection has been quiet for its interval. The next flush posts a signalled
     * zero-length RDMA WRITE: no SGE, so the peer's device checks no rkey or address (IBA C9-88) and writes
     * nothing, and it consumes no receive, so it needs no credit and works against any RC peer. Its
     * acknowledgement is all it is for; without one, RETRY_EXC_ERR closes the connection.
     */
    void probe() {
        if (established && !closed) {
            probeDue = true;
            flushRequest.run();
        }
    }

    /** Adds the probe when one is due and a slot is free (it takes one like any WRITE; a credit it needs not). */
    private void appendProbe() {
        if (!probeDue || closed || blocked(false)) {
            return;
        }
        probeDue = false;
        PendingOperation p = pending.acquire(target, OperationType.WRITE, PostedRequests.PROBE, -1, System.nanoTime());
        flow.posted(false);
        chain.add(p.wrId(), WrOpcode.RDMA_WRITE, 0);
        added(p, false);
    }

    /** The next stream with a staged message, in turn, or null when none has one. */
    private StreamingSend nextStream() {
        int n = streams.size();
        for (int k = 0; k < n; k++) {
            if (streamTurn >= n) {
                streamTurn = 0;
            }
            StreamingSend s = streams.get(streamTurn++);
            if (s.hasStaged()) {
                return s;
            }
        }
        return null;
    }

    /** {@code stream} ended (completed, failed or cancelled): it leaves the list. */
    void streamEnded(StreamingSend stream) {
        if (stream.queued) {
            stream.queued = false;
            streams.remove(stream);
        }
    }

    /** Whether the next request cannot be added now; a missing credit registers a credit wait. */
    private boolean blocked(boolean consumesPeerReceive) {
        FlowControl.Blocked blocked = flow.blocked(consumesPeerReceive, creditWord.incoming());
        if (blocked == FlowControl.Blocked.CREDIT && !creditWaitRegistered) {
            creditWaitRegistered = true;
            metrics.creditsWaiting(1);
            poller.awaitCredits(client);
        }
        return blocked != FlowControl.Blocked.NO; // SLOT: a completion asks for the next flush
    }

    /**
     * The poller re-reads credits for this connection while it waits for them: {@code STILL_WAITING} while
     * the next request still needs a credit the peer has not granted; otherwise the wait ends (an empty
     * queue, a cancelled head, or a closed connection end it too, so the poller can sleep again) and the
     * next flush posts what the credits allow.
     */
    int recheckCredits() {
        if (!creditWaitRegistered) {
            return CompletionPoller.DONE;
        }
        Operation head = waiting.peek();
        boolean next = head != null ? !head.cancelled && head.consumesPeerReceive() : hasStagedStream();
        boolean stillBlocked = established && !closed && next
                && flow.blocked(true, creditWord.incoming()) == FlowControl.Blocked.CREDIT;
        if (stillBlocked) {
            return CompletionPoller.STILL_WAITING;
        }
        creditWaitRegistered = false;
        metrics.creditsWaiting(-1);
        flushRequest.run();
        return next ? CompletionPoller.PROGRESSED : CompletionPoller.DONE;
    }

    private boolean hasStagedStream() {
        for (int i = 0; i < streams.size(); i++) {
            if (streams.get(i).hasStaged()) {
                return true;
            }
        }
        return false;
    }

    private void appendOperation(Operation op) {
        PendingOperation p = pending.acquire(target, op.type, op, -1, System.nanoTime());
        flow.posted(op.consumesPeerReceive());
        int before = chain.count();
        boolean inline;
        try {
            inline = op.writeWorkRequest(chain, p.wrId(), inlineLimit);
        } catch (RuntimeException e) {
            unwritten(p, before, e);
            throw e;
        }
        added(p, inline);
    }

    private void appendStreamMessage(StreamingSend s) {
        PendingOperation p = pending.acquire(target, OperationType.SEND, s, -1, System.nanoTime());
        flow.posted(true);
        int before = chain.count();
        boolean inline;
        try {
            inline = s.writeNext(chain, p.wrId(), inlineLimit);
        } catch (RuntimeException e) {
            unwritten(p, before, e);
            throw e;
        }
        added(p, inline);
    }

    /**
     * Writing {@code p}'s work request threw: if it got into the chain, it is refused with the chain (see
     * {@link #postChain}); otherwise it is refused here, so its entry, slot and credit come back either way.
     */
    private void unwritten(PendingOperation p, int before, RuntimeException e) {
        if (chain.count() > before) {
            chainEntries[before] = p;
            chainInline[before] = false;
        } else {
            refused(p, new RdmaException(description + ": writing a " + p.type + " work request failed: "
                    + e.getMessage(), e));
        }
    }

    /**
     * Writes the running total of posted receives to the peer when it is worth it (see {@link FlowControl}):
     * one update in flight at a time, on the slot reserved for it, as an 8-byte inline WRITE (the value is
     * copied at post time, so a later update never races the device reading an earlier one).
     */
    private void appendCreditUpdate() {
        if (!peerCreditWordOpen || !flow.shouldAdvertise()) {
            return;
        }
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, null, -1, System.nanoTime());
        int i = chain.add(p.wrId(), WrOpcode.RDMA_WRITE, SendFlags.INLINE);
        chain.sge(i, creditWord.outgoing(flow.advertising()), 8, creditWord.lkey());
        chain.rdma(i, peerCreditAddress, peerCreditRkey);
        added(p, true);
    }

    /** The request just added to the chain: signalled when its turn in the interval came. */
    private void added(PendingOperation p, boolean inline) {
        int i = chain.count() - 1;
        chainEntries[i] = p;
        chainInline[i] = inline;
        if (++sinceSignal >= signalInterval) {
            chain.addSendFlags(i, SendFlags.SIGNALED);
            sinceSignal = 0;
        }
    }

    /**
     * Posts the chain in one call (its last request signalled); returns the requests the device took.
     * {@code buildFailure}: building the chain threw, so none of it is posted (each request in it is refused
     * with that failure, as if the device had refused the chain at its first request). Whatever happens, the
     * chain is empty afterwards: a stale request is never posted by a later flush.
     */
    private int postChain(RuntimeException buildFailure) {
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
                PendingOperation p = chainEntries[k];
                posted.add(p);
                if (chainInline[k] && p.operation instanceof Operation op) {
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
            } else if (failure != null) {
                refusal = new RdmaException(description + ": ibv_post_send refused work request " + accepted
                        + " of a chain of " + n + " (" + failure.getMessage() + "); it and the " + (n - accepted - 1)
                        + " after it were not posted", failure);
            }
            prefixUnsignalled = refusal != null && accepted > 0
                    && (chain.sendFlags(accepted - 1) & SendFlags.SIGNALED) == 0;
            for (int k = accepted; k < n; k++) {
                PendingOperation p = chainEntries[k];
                chainEntries[k] = null;
                if (p != null) {
                    refused(p, refusal);
                }
            }
        } finally {
            java.util.Arrays.fill(chainEntries, 0, n, null);
            chain.clear();
        }
        if (refusal != null) {
            // An unsignalled prefix that no fence ends would never complete: then close at once, and the
            // close's drain timeout abandons it (it executed, or may have: see abandonPosted).
            refused(refusal, !prefixUnsignalled || postFence());
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
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, PostedRequests.FENCE, -1, System.nanoTime());
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

    /**
     * After a refused chain: what waits fails with the refusal, nothing more is posted, and the connection
     * closes when the requests the device took have completed (at once when there are none, or when
     * {@code postedWillComplete} is false: nothing would ever complete them).
     */
    private void refused(RdmaException refusal, boolean postedWillComplete) {
        refusedWith = refusal;
        closed = true;
        Operation op;
        while ((op = waiting.poll()) != null) {
            op.fail(refusal);
        }
        for (StreamingSend s : streams.toArray(StreamingSend[]::new)) {
            s.fail(refusal);
        }
        if (creditWaitRegistered) {
            creditWaitRegistered = false;
            metrics.creditsWaiting(-1);
        }
        if (postedWillComplete) {
            closeIfRefusedAndIdle();
        } else {
            refusedWith = null;
            postFailed.accept(refusal);
        }
    }

    private void closeIfRefusedAndIdle() {
        if (refusedWith != null && posted.count() == 0) {
            RdmaException refusal = refusedWith;
            refusedWith = null;
            postFailed.accept(refusal);
        }
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

    /**
     * A completion for {@code p}: every entry posted before it completed successfully (see the class
     * comment), then {@code p} itself with the completion's outcome. Each entry leaves the ring and is
     * finished exactly once; then the next flush may use the freed slots.
     */
    void completed(PendingOperation p, boolean success, boolean flushed, Throwable failure) {
        posted.completed(p, success, flushed, failure);
        flushRequest.run();
        closeIfRefusedAndIdle();
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
        for (StreamingSend s : streams.toArray(StreamingSend[]::new)) {
            s.fail(closedError.apply("not posted")); // ends it: it leaves the list
        }
        if (creditWaitRegistered) {
            creditWaitRegistered = false;
            metrics.creditsWaiting(-1);
        }
    }

    /** The QP was destroyed without the completions of what is still posted arriving: see {@link PostedRequests#abandonAll}. */
    void abandonPosted() {
        posted.abandonAll();
    }
}
