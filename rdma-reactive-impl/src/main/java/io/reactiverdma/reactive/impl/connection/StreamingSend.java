package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.HandOffTask;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.MonoSink;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * {@code send(Publisher)}: one subscriber to the caller's messages for the whole stream, with no
 * {@code Mono}, {@link Operation} or subscription per message.
 *
 * <p>The stream stages its messages in a {@link StagingRing} of registered bytes, each message taking its
 * own length, and keeps at most {@code window} (the send queue's depth) messages asked for and not yet
 * completed. It asks upstream for as many as the free entries and the ring's free bytes allow (the bytes
 * estimated from the sizes sent lately: small messages get the whole window, whatever the peer's receive
 * buffer size). {@link #onNext} (on the upstream's thread) copies the message into the ring (or, when it was
 * larger than estimated and does not fit, into a buffer of its own: see {@link StagingRing}; the caller's
 * buffer is free again when onNext returns), publishes it with a release store of the {@link #produced}
 * count, and asks the poller thread to take it (one hand-over task, not one per message, while the poller has
 * not run it yet). On the poller thread the {@link SendQueue} posts staged messages in chains, inline from
 * the ring when small enough, and completions come back in post order, so a message's bytes are free again
 * when its completion (or a later one's) arrived; the stream then requests more, once per duty cycle.
 *
 * <p>Steady state allocates nothing per message: no object is created on the data path (the one task is
 * reused, and is its own node in the poller's hand-off queue), and the only per-stream allocations are this
 * object (with its {@link StagingGate}), its staging ring and the result's sink.
 *
 * <p>Outcome: the result completes when upstream completed and every message was sent (its completion
 * arrived); it errors with the first failure (a message too large, an error completion, the connection
 * closing: the messages not yet posted are not sent) and upstream is cancelled; cancelling the result
 * cancels upstream. The staging area is released once nothing posted from it is outstanding.
 */
final class StreamingSend extends HandOffTask implements CoreSubscriber<ByteBuffer> {
    private static final VarHandle PRODUCED;
    private static final VarHandle SCHEDULED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            PRODUCED = l.findVarHandle(StreamingSend.class, "produced", long.class);
            SCHEDULED = l.findVarHandle(StreamingSend.class, "scheduled", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SendQueue queue;
    private final CompletionPoller poller;
    private final MonoSink<Void> sink;
    private final StagingRing staging;
    private final int window;
    private final int maxMessageSize;
    /** What subscribers hold the connection by: kept reachable while the stream runs. */
    @SuppressWarnings("unused")
    private final Object owner;
    /** Volatile: with {@link #upstreamUnwanted} a handshake, so a cancel racing onSubscribe is never lost. */
    private volatile Subscription upstream;
    /**
     * Set (before {@link #upstream} is read) when upstream must stop: the result was cancelled, or the stream
     * ended with upstream still going. An {@link #onSubscribe} that comes later cancels at once.
     */
    private volatile boolean upstreamUnwanted;
    /** Messages staged by onNext (upstream's thread; read with acquire on the poller thread). */
    private volatile long produced;
    /** 1 while this object is queued as a task on the poller (set by any thread, cleared by the poller). */
    private volatile int scheduled;
    /** Messages asked of upstream so far (written on the poller thread, read by onNext's overflow check). */
    private volatile long requested;
    private volatile boolean upstreamDone;
    private volatile Throwable upstreamError;
    private volatile boolean cancelled;
    /**
     * onNext against the staging area's release: the poller releases it only when no onNext is copying,
     * and an onNext that starts after the close copies nothing.
     */
    private final StagingGate gate = new StagingGate();
    // ---- poller thread only
    /**
     * Set while {@link #requestMore()} asks upstream, which may answer at once on this thread: what it stages
     * then is appended by the same flush, so {@link #stage} hands nothing over for it (a CAS and a task run
     * per message saved), and {@link #onNext} skips the staging gate. Written by the poller thread only;
     * another thread may read it stale, which is why both uses also check that they run on the poller thread.
     */
    private boolean requesting;
    /** Listed in the send queue's streams. */
    boolean queued;
    private long postedCount;
    private long completedCount;
    private boolean terminated;
    private boolean stagingReleased;

    StreamingSend(SendQueue queue, CompletionPoller poller, MonoSink<Void> sink, StagingRing staging, int window,
            int maxMessageSize, Object owner) {
        this.queue = queue;
        this.poller = poller;
        this.sink = sink;
        this.staging = staging;
        this.window = window;
        this.maxMessageSize = maxMessageSize;
        this.owner = owner;
    }

    // --------------------------------------------------------------------- upstream (any one thread)
    @Override
    public void onSubscribe(Subscription s) {
        upstream = s;
        if (upstreamUnwanted) {
            // Cancelled (or ended) between subscribing upstream and this call: nobody else would cancel it.
            s.cancel();
        }
        schedule(); // the first request is made on the poller thread, by the next flush
    }

    @Override
    public void onNext(ByteBuffer message) {
        if (requesting && poller.inPollerThread()) {
            // Upstream answers requestMore() on the poller thread: the only thread that releases the staging
            // area is this one, busy here, so the gate (two atomic operations) has nothing to guard.
            if (!terminated && !upstreamDone && !cancelled) {
                stage(message);
            }
            return;
        }
        boolean open = gate.enter();
        try {
            if (!open || upstreamDone || cancelled) {
                return;
            }
            stage(message);
        } finally {
            if (gate.leave()) {
                schedule(); // the poller may have left the staging area's release to this thread
            }
        }
    }

    /** Copies the message into the staging ring and publishes it. Upstream's thread, inside onNext. */
    private void stage(ByteBuffer message) {
        long seq = produced;
        int n = message.remaining();
        if (n > maxMessageSize || n > staging.capacity()) {
            upstream.cancel();
            onError(new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                    "message " + seq + " of the stream has " + n + " bytes, which does not fit the receiver's "
                            + maxMessageSize + "-byte receive buffers"));
            return;
        }
        if (seq >= requested) {
            upstream.cancel();
            onError(Exceptions.failWithOverflow("the publisher sent message " + seq + " of the stream while only "
                    + requested + " were requested"));
            return;
        }
        try {
            staging.stage(seq, message, n);
        } catch (RuntimeException e) {
            // A spill buffer the pool could not give (closed with its device, registration refused).
            upstream.cancel();
            onError(e);
            return;
        }
        PRODUCED.setRelease(this, seq + 1);
        if (!(requesting && poller.inPollerThread())) {
            schedule();
        } // else staged during this flush's requestMore(): the flush appends it next, no hand-over needed
    }

    @Override
    public void onError(Throwable t) {
        if (upstreamDone) {
            return;
        }
        upstreamError = t;
        upstreamDone = true;
        schedule();
    }

    @Override
    public void onComplete() {
        upstreamDone = true;
        schedule();
    }

    /** The result's subscriber cancelled (any thread): upstream stops; what is posted completes first. */
    void cancel() {
        cancelled = true;
        upstreamUnwanted = true;
        Subscription s = upstream;
        if (s != null) {
            s.cancel();
        }
        schedule();
    }

    private void schedule() {
        if (SCHEDULED.compareAndSet(this, 0, 1)) {
            poller.run(this);
        }
    }

    // ---------------------------------------------------------------------------------- poller thread
    /** The hand-over task: new messages, the end of upstream, or a cancel. */
    @Override
    public void run() {
        assert OwnerThread.check(poller);
        SCHEDULED.setRelease(this, 0);
        if (terminated) {
            releaseStagingIfIdle();
            return;
        }
        if (cancelled) {
            terminate(null, false);
            return;
        }
        Throwable error = upstreamError;
        if (error != null) {
            terminate(error, true);
            return;
        }
        if (hasStaged() || !queued) {
            queue.streamReady(this);
        }
        completeIfDone();
    }

    /** Asks upstream for as many messages as free entries and staging bytes allow (called once per flush). */
    void requestMore() {
        assert OwnerThread.check(poller);
        if (terminated || upstreamDone || upstream == null) {
            return;
        }
        boolean idle = requested == completedCount;
        long free = staging.affordable(requested - (long) PRODUCED.getAcquire(this), window - (requested - completedCount),
                idle);
        // Ask in batches of a quarter of what the ring holds now (or anything when all came back), so that
        // upstream is not asked once per message.
        if (free > 0 && (free >= Math.max(1, staging.windowNow() / 4) || idle)) {
            requested += free;
            requesting = true;
            try {
                upstream.request(free);
            } finally {
                requesting = false;
            }
        }
    }

    boolean hasStaged() {
        assert OwnerThread.check(poller);
        return !terminated && (long) PRODUCED.getAcquire(this) > postedCount;
    }

    /** Adds the next staged message to {@code chain} as a SEND; returns whether it is inline. */
    boolean writeNext(SendWorkRequests chain, long wrId, int inlineLimit) {
        assert OwnerThread.check(poller);
        long seq = postedCount;
        int n = staging.length(seq);
        boolean inline = n > 0 && n <= inlineLimit;
        int i = chain.add(wrId, WrOpcode.SEND, inline ? SendFlags.INLINE : 0);
        postedCount++; // counted once in the chain, so a refusal of the chain (refused()) takes it back
        if (n > 0) {
            chain.sge(i, staging.address(seq), n, staging.lkey(seq));
        }
        staging.posting(seq);
        return inline;
    }

    /** The length of the oldest message posted and not completed yet (for the byte counters). */
    int completedLength() {
        assert OwnerThread.check(poller);
        return staging.length(completedCount);
    }

    /** The oldest posted message finished: sent ({@code error} null) or failed (flushed, error completion). */
    void sent(boolean success, Throwable error) {
        assert OwnerThread.check(poller);
        staging.free(completedCount++);
        if (!success) {
            terminate(error, true);
        } else if (!terminated) {
            queue.streamReady(this); // an entry and its bytes came free: the next flush requests more
            completeIfDone();
        }
        releaseStagingIfIdle();
    }

    /** A message of a refused chain: never posted. */
    void refused(Throwable error) {
        assert OwnerThread.check(poller);
        postedCount--;
        terminate(error, true);
    }

    /** The connection closes: the stream fails, and messages not posted yet are not sent. */
    void fail(Throwable error) {
        assert OwnerThread.check(poller);
        terminate(error, true);
    }

    private void completeIfDone() {
        if (!terminated && upstreamDone && upstreamError == null && completedCount == (long) PRODUCED.getAcquire(this)) {
            terminated = true;
            queue.streamEnded(this);
            releaseStagingIfIdle();
            sink.success();
        }
    }

    private void terminate(Throwable error, boolean cancelUpstream) {
        if (terminated) {
            releaseStagingIfIdle();
            return;
        }
        terminated = true;
        queue.streamEnded(this);
        if (cancelUpstream && !upstreamDone) {
            upstreamUnwanted = true;
            Subscription s = upstream;
            if (s != null) {
                s.cancel();
            }
        }
        releaseStagingIfIdle();
        if (error != null && !cancelled) {
            sink.error(error);
        }
    }

    /** Once terminated and nothing posted from the staging area is outstanding, it goes back to the pool. */
    private void releaseStagingIfIdle() {
        if (!terminated || stagingReleased) {
            return;
        }
        boolean noProducer = gate.close();
        if (completedCount == postedCount && noProducer) {
            stagingReleased = true;
            staging.release(completedCount, (long) PRODUCED.getAcquire(this));
        }
    }
}
