package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import reactor.util.annotation.Nullable;

import java.util.function.Consumer;

/**
 * A connection's own receive queue as its {@link ReceiveQueue}'s source: its buffers in a {@link ReceiveRing},
 * posted for the demand not covered yet as one chain for the whole depth (what a poller cycle made postable
 * goes in one {@code ibv_post_recv}), their completions, and the buffers back to the pool once the queue
 * finished.
 *
 * <p>Not thread-safe: every method runs on the connection's poller thread.
 */
final class OwnReceives implements ReceiveSource {
    private final CompletionPoller poller;
    private final PendingOperations pending;
    private final FlowControl flow;
    private final EngineMetrics metrics;
    private final ReceiveRing ring;
    private final int bufferSize;
    private final String description;
    /** Closes the connection after a refused post (other than ENOMEM): it cannot go on. */
    private final Consumer<Throwable> postFailed;
    private ReceiveQueue queue;
    private boolean refused;
    private int posted;

    OwnReceives(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, FlowControl flow, EngineMetrics metrics, EngineBuffer[] buffers, int bufferSize,
            Consumer<Throwable> postFailed) {
        this.description = description;
        this.poller = poller;
        this.pending = pending;
        this.flow = flow;
        this.metrics = metrics;
        this.bufferSize = bufferSize;
        this.postFailed = postFailed;
        // One chain for the whole depth: what a poller cycle made postable goes in one ibv_post_recv.
        this.ring = new ReceiveRing(description, buffers, bufferSize, buffers.length, pending, target, qp::postReceive);
    }

    @Override
    public void attach(ReceiveQueue queue) {
        this.queue = queue;
    }

    @Override
    public int post(FlowControl flow, int undelivered) {
        assert OwnerThread.check(poller);
        if (refused) {
            return 0;
        }
        int n = flow.receivesToPost(ring.freeCount(), undelivered);
        if (n <= 0) {
            return 0;
        }
        // The requests before a refused one were posted: they stay pending and complete (or flush) like any
        // other. ENOMEM (the receive queue full for now) leaves the rest for the next post (a completion, a
        // release or a request makes one); any other refusal means the connection is broken.
        int accepted = ring.post(n);
        if (accepted > 0) {
            flow.receivesPosted(accepted);
            posted += accepted;
            metrics.outstanding(accepted);
        }
        RuntimeException failure = ring.refusal();
        if (failure != null) {
            refused = true;
            postFailed.accept(new RdmaException(description + ": ibv_post_recv failed: " + failure.getMessage(), failure));
        }
        return accepted;
    }

    @Override
    public void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags) {
        assert OwnerThread.check(poller);
        posted--;
        if (!success) {
            flow.receiveFlushed();
            ring.free(index);
            return;
        }
        queue.arrived(ring.buffer(index), index, ring.generation(index), opcode, byteLen, imm, wcFlags);
    }

    @Override
    public void abandonPosted(PendingOperation p) {
        assert OwnerThread.check(poller);
        int index = p.receiveIndex;
        long latencyNs = System.nanoTime() - p.postedNs;
        pending.free(p);
        posted--;
        metrics.outstanding(-1);
        metrics.completed(OperationType.RECEIVE, false, true, latencyNs, 0);
        flow.receiveFlushed();
        ring.free(index);
    }

    @Override
    public int outstanding() {
        return posted;
    }

    /** Free again: reposted by the next flush, or back to the pool once the queue finished. */
    @Override
    public void giveBack(int index, int generation, boolean finished) {
        assert OwnerThread.check(poller);
        if (finished) {
            ring.retire(index, generation);
            metrics.receiveMemory(-bufferSize);
        } else {
            ring.giveBack(index, generation);
        }
    }

    @Override
    @Nullable
    public EngineBuffer lendable(EngineBuffer buffer) {
        return null; // the lent message made a view of each of these buffers once
    }

    @Override
    public void finish() {
        assert OwnerThread.check(poller);
        metrics.receiveMemory(-(long) ring.releaseFree() * bufferSize);
    }

    @Override
    public void lastWorkRequestReached() {
        // Only a QP on a shared receive queue reports it.
    }

    @Override
    public boolean drainsBeforeDestroy() {
        return false;
    }

    @Override
    public void beforeDestroy(Runnable destroy) {
        destroy.run();
    }
}
