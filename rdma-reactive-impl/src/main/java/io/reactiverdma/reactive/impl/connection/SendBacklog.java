package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import java.util.ArrayList;
import java.util.function.Supplier;

/**
 * What waits to be posted on one connection's send queue, and in which order: operations in a FIFO (O(1)
 * cancel: {@link WaitingOperations}), then the staged messages of live streams, one stream after another in
 * turn; and whether the next request may be added now ({@link #blocked}: a free slot, and a credit when it
 * consumes one of the peer's receives). A missing credit registers this connection with its poller, which
 * re-reads the credit word until the peer grants one ({@link #recheckCredits}).
 *
 * <p>Not thread-safe: the connection's poller thread only (see {@link SendQueue}).
 */
final class SendBacklog {
    private final CompletionPoller poller;
    private final PollerClient client;
    private final FlowControl flow;
    private final ControlWords.Slot creditWord;
    private final EngineMetrics metrics;
    private final WaitingOperations waiting = new WaitingOperations();
    /** Live streams (until they end), whose staged messages are served in turn after the waiting operations. */
    private final ArrayList<StreamingSend> streams = new ArrayList<>();
    private int streamTurn;
    private boolean creditWaitRegistered;

    SendBacklog(SendQueue.Wiring w) {
        this.poller = w.poller();
        this.client = w.client();
        this.flow = w.flow();
        this.creditWord = w.creditWord();
        this.metrics = w.metrics();
    }

    int waitingCount() {
        return waiting.size();
    }

    void add(Operation op) {
        waiting.add(op);
    }

    /** Takes {@code op} out if it still waits; true if it did. */
    boolean remove(Operation op) {
        return waiting.remove(op);
    }

    /** The next waiting operation (cancelled ones dropped on the way), without taking it; null when none. */
    Operation nextOperation() {
        Operation op;
        while ((op = waiting.peek()) != null && op.cancelled) {
            waiting.poll();
            op.releaseHolds();
        }
        return op;
    }

    /** Takes the operation {@link #nextOperation()} returned. */
    void takeOperation() {
        waiting.poll();
    }

    /** Lists {@code stream} (until it ends) to be served in turn. */
    void addStream(StreamingSend stream) {
        if (!stream.queued) {
            stream.queued = true;
            streams.add(stream);
        }
    }

    /** {@code stream} ended (completed, failed or cancelled): it leaves the list. */
    void removeStream(StreamingSend stream) {
        if (stream.queued) {
            stream.queued = false;
            streams.remove(stream);
        }
    }

    /** Live streams, to ask their upstreams for more by index (without a copy per flush). */
    int streamCount() {
        return streams.size();
    }

    StreamingSend stream(int i) {
        return streams.get(i);
    }

    /** The next stream with a staged message, in turn, or null when none has one. */
    StreamingSend nextStream() {
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

    /** Whether the next request cannot be added now; a missing credit registers a credit wait. */
    boolean blocked(boolean consumesPeerReceive) {
        FlowControl.Blocked blocked = flow.blocked(consumesPeerReceive, creditWord.incoming());
        if (blocked == FlowControl.Blocked.CREDIT && !creditWaitRegistered) {
            creditWaitRegistered = true;
            metrics.creditsWaiting(1);
            poller.awaitCredits(client);
        }
        return blocked != FlowControl.Blocked.NO; // SLOT: a completion asks for the next flush
    }

    /**
     * The poller re-reads credits while this connection waits for them: {@code STILL_WAITING} while the next
     * request still needs a credit the peer has not granted ({@code open}: the connection is established and
     * not closed); otherwise the wait ends (an empty backlog, a cancelled head or a closed connection end it
     * too, so the poller can sleep again) and {@code flushRequest} runs, so the next flush posts what the
     * credits allow.
     */
    int recheckCredits(boolean open, Runnable flushRequest) {
        if (!creditWaitRegistered) {
            return CompletionPoller.DONE;
        }
        Operation head = waiting.peek();
        boolean next = head != null ? !head.cancelled && head.consumesPeerReceive() : hasStagedStream();
        if (open && next && flow.blocked(true, creditWord.incoming()) == FlowControl.Blocked.CREDIT) {
            return CompletionPoller.STILL_WAITING;
        }
        endCreditWait();
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

    /** Fails everything that waits with an {@code error} each (the queue closed, or a chain was refused). */
    void failAll(Supplier<? extends Throwable> error) {
        Operation op;
        while ((op = waiting.poll()) != null) {
            op.fail(error.get());
        }
        for (StreamingSend s : streams.toArray(StreamingSend[]::new)) {
            s.fail(error.get()); // ends it: it leaves the list
        }
        endCreditWait();
    }

    private void endCreditWait() {
        if (creditWaitRegistered) {
            creditWaitRegistered = false;
            metrics.creditsWaiting(-1);
        }
    }
}
