package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The send side of one connection, owned by its poller thread: what is submitted waits in the
 * {@link SendBacklog} (operations in order, then streams in turn) for a send-queue slot or (with credit
 * flow control) a credit; a flush appends what may go to the {@link SendChain} and posts it; what the device
 * took is finished, in order, by {@link PostedRequests} as completions arrive. This class decides when:
 * it owns the queue's state (established, closed, refused) and this side's credit updates to the peer,
 * which go on their own reserved slot.
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
 * for a completion ({@link SendChain}). RC completes a send queue in order, and a request that fails or is
 * flushed gives its own completion whether signalled or not, so a completion for entry X means: every entry
 * posted before X completed successfully and X has the completion's status ({@link PostedRequests}).
 * Because the last request of every chain is signalled, no unsignalled request is ever left without a later
 * completion to end it.
 *
 * <p>Not thread-safe: every method runs on the connection's poller thread (checked with assertions on:
 * {@link OwnerThread}). Signals to subscribers are made from here, so user code may re-enter
 * ({@link #submit} from a callback): that only queues, and asks for another flush.
 */
final class SendQueue {
    /** What a connection's send queue works with (set up once, on the rdma_cm thread). */
    record Wiring(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, PollerClient client, FlowControl flow, ControlWords.Slot creditWord,
            int inlineLimit, int sendDepth, int signalInterval, EngineMetrics metrics) {
    }

    private final String description;
    private final CompletionPoller poller;
    private final FlowControl flow;
    private final SendBacklog backlog;
    private final SendChain chain;
    /** Posted requests not finished yet, in post order. */
    private final PostedRequests posted;
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
    /** {@link IdleProbe} asked for a probe: the next flush with a free slot posts it. */
    private boolean probeDue;

    /**
     * {@code flushRequest} asks the poller for a flush at the end of its cycle; {@code postFailed} closes the
     * connection after a refused post; {@code closedError} makes the error of an operation the closed
     * connection refuses ("refused", "not posted").
     */
    SendQueue(Wiring w, Runnable flushRequest, Consumer<Throwable> postFailed,
            Function<String, ConnectionClosedException> closedError) {
        this.description = w.description();
        this.poller = w.poller();
        this.flow = w.flow();
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        this.closedError = closedError;
        this.posted = new PostedRequests(description, w.sendDepth() + 1, w.pending(), flow, w.metrics(), closedError);
        this.backlog = new SendBacklog(w);
        this.chain = new SendChain(w, posted, this::refused);
    }

    CompletionPoller poller() {
        return poller;
    }

    /** Where the peer's credit word is, once it may be written: the next flush may write it. */
    void peerCreditWord(long address, int rkey) {
        assert OwnerThread.check(poller);
        this.peerCreditAddress = address;
        this.peerCreditRkey = rkey;
        this.peerCreditWordOpen = true;
        flushRequest.run();
    }

    /** The connection is up: what waited for it is posted by the next flush. */
    void established() {
        assert OwnerThread.check(poller);
        established = true;
        flushRequest.run();
    }

    /** Work requests posted and not finished yet (user operations, stream messages and credit updates). */
    int outstanding() {
        return posted.count();
    }

    int waitingCount() {
        return backlog.waitingCount();
    }

    /** Queues {@code op} for the next flush; refused at once when the connection is closing. */
    void submit(Operation op) {
        assert OwnerThread.check(poller);
        if (closed) {
            op.fail(refusedWith != null ? refusedWith : closedError.apply("refused"));
            return;
        }
        if (op.cancelled) {
            op.releaseHolds();
            return;
        }
        backlog.add(op);
        flushRequest.run();
    }

    /**
     * The subscriber cancelled (or a {@code timeout} fired). Not posted yet: the operation leaves the queue
     * (in O(1): see {@link WaitingOperations}) and drops its holds now, and what waited behind it may go.
     * Posted: it stays pending, and its holds are dropped only when it leaves the ring, because the device
     * may still read or write its buffer.
     */
    void cancel(Operation op) {
        assert OwnerThread.check(poller);
        if (backlog.remove(op)) {
            op.releaseHolds();
            flushRequest.run();
        }
    }

    /** {@code stream} has staged messages or free staging: listed (until it ends), it is served by the next flush. */
    void streamReady(StreamingSend stream) {
        assert OwnerThread.check(poller);
        if (closed) {
            stream.fail(refusedWith != null ? refusedWith : closedError.apply("not posted"));
            return;
        }
        backlog.addStream(stream);
        flushRequest.run();
    }

    /** {@code stream} ended (completed, failed or cancelled): it leaves the list. */
    void streamEnded(StreamingSend stream) {
        assert OwnerThread.check(poller);
        backlog.removeStream(stream);
    }

    /**
     * Poller thread, at the end of a duty cycle: streams ask their upstream for what their free staging
     * allows, then the credit update (when due), waiting operations and staged stream messages are posted
     * as one chain. Returns the requests posted.
     */
    int flush() {
        assert OwnerThread.check(poller);
        if (!established || closed) {
            return 0;
        }
        for (int i = 0; i < backlog.streamCount(); i++) {
            StreamingSend s = backlog.stream(i);
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
            if (peerCreditWordOpen && flow.shouldAdvertise()) {
                // one update in flight at a time (see FlowControl), on the slot reserved for it
                chain.appendCreditUpdate(peerCreditAddress, peerCreditRkey);
            }
            appendReady();
            if (probeDue && !closed && !backlog.blocked(false)) {
                probeDue = false;
                chain.appendProbe();
            }
        } catch (RuntimeException e) {
            // Nothing half-built may stay in the chain for the next flush: what was added is not posted.
            return chain.post(e);
        }
        return chain.post(null);
    }

    /** Appends waiting operations, then stream messages in turn, while slots and credits allow. */
    private void appendReady() {
        while (!closed) {
            Operation op = backlog.nextOperation();
            if (op != null) {
                if (backlog.blocked(op.consumesPeerReceive())) {
                    return;
                }
                backlog.takeOperation();
                chain.appendOperation(op);
                continue;
            }
            StreamingSend s = backlog.nextStream();
            if (s == null || backlog.blocked(true)) {
                return;
            }
            chain.appendStreamMessage(s);
        }
    }

    /**
     * {@link IdleProbe}: the connection has been quiet for its interval. The next flush posts a signalled
     * zero-length RDMA WRITE: no SGE, so the peer's device checks no rkey or address (IBA C9-88) and writes
     * nothing, and it consumes no receive, so it needs no credit and works against any RC peer. Its
     * acknowledgement is all it is for; without one, RETRY_EXC_ERR closes the connection.
     */
    void probe() {
        assert OwnerThread.check(poller);
        if (established && !closed) {
            probeDue = true;
            flushRequest.run();
        }
    }

    /** See {@link SendBacklog#recheckCredits}. */
    int recheckCredits() {
        assert OwnerThread.check(poller);
        return backlog.recheckCredits(established && !closed, flushRequest);
    }

    /**
     * After a refused chain: what waits fails with the refusal, nothing more is posted, and the connection
     * closes when the requests the device took have completed (at once when there are none, or when
     * {@code postedWillComplete} is false: nothing would ever complete them).
     */
    private void refused(RdmaException refusal, boolean postedWillComplete) {
        refusedWith = refusal;
        closed = true;
        backlog.failAll(() -> refusal);
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

    /**
     * A completion for {@code p}: every entry posted before it completed successfully (see the class
     * comment), then {@code p} itself with the completion's outcome. Each entry leaves the ring and is
     * finished exactly once; then the next flush may use the freed slots.
     */
    void completed(PendingOperation p, boolean success, boolean flushed, Throwable failure) {
        assert OwnerThread.check(poller);
        posted.completed(p, success, flushed, failure);
        flushRequest.run();
        closeIfRefusedAndIdle();
    }

    /** The connection closes: nothing more is posted, and what waits fails now. */
    void close() {
        assert OwnerThread.check(poller);
        if (closed) {
            return;
        }
        closed = true;
        backlog.failAll(() -> closedError.apply("not posted"));
    }

    /** The QP was destroyed without the completions of what is still posted arriving: see {@link PostedRequests#abandonAll}. */
    void abandonPosted() {
        assert OwnerThread.check(poller);
        posted.abandonAll();
    }
}
