package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * The receive side of one connection, owned by its poller thread: the receive buffers, receives posted
 * only for the subscriber's demand (as one chained post), delivery in arrival order, and buffers coming
 * back by generation-stamped {@link EngineMessage} handles.
 *
 * <p>Demand is counted here, on the poller thread, for every way of delivering: directly (onNext on the
 * poller thread) or on a callback scheduler's worker, one task per message in order. Nothing prefetches,
 * so no receive is ever posted beyond what the subscriber asked for.
 *
 * <p>Not thread-safe: every method runs on the poller thread. A subscriber that requests or releases from
 * onNext re-enters {@link #deliver()}, which then only counts; the loop already running delivers.
 */
final class ReceiveQueue {
    private final String description;
    private final QueuePair qp;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final CompletionPoller poller;
    private final FlowControl flow;
    private final EngineMetrics metrics;
    private final EngineBuffer[] buffers;
    private final int[] generations;
    private final int[] free;
    private int freeCount;
    private final int bufferSize;
    private final ReceiveWorkRequests wr;
    private final PendingOperation[] batch;
    private final ArrayDeque<EngineMessage> undelivered = new ArrayDeque<>();
    /** After receives were posted or a buffer came back: this side may owe the peer a credit update. */
    private final Runnable afterPost;
    /** A refused post: the connection cannot go on. */
    private final Consumer<Throwable> postFailed;
    private FluxSink<RdmaMessage> sink;
    private Scheduler.Worker worker;
    private boolean delivering;
    private boolean closing;
    private boolean finished;
    private Throwable terminalError;
    private int posted;
    /** Receives come from this shared receive queue instead of {@link #buffers} (null: its own). */
    private SharedReceives.Member shared;

    ReceiveQueue(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, FlowControl flow, EngineMetrics metrics, EngineBuffer[] buffers, int bufferSize,
            Runnable afterPost, Consumer<Throwable> postFailed) {
        this.description = description;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.poller = poller;
        this.flow = flow;
        this.metrics = metrics;
        this.buffers = buffers;
        this.bufferSize = bufferSize;
        this.afterPost = afterPost;
        this.postFailed = postFailed;
        int depth = buffers.length;
        this.generations = new int[depth];
        this.free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        this.freeCount = depth;
        this.wr = new ReceiveWorkRequests(Math.max(1, depth), 1); // no buffers of its own on an SRQ
        this.batch = new PendingOperation[depth];
    }

    CompletionPoller poller() {
        return poller;
    }

    /** From now on receive from an SRQ: credits are allotted from it, messages land in its buffers. */
    void useShared(SharedReceives.Member member) {
        this.shared = member;
    }

    String description() {
        return description;
    }

    boolean isFinished() {
        return finished;
    }

    boolean creditsAgreed() {
        return flow.credits();
    }

    /** The SRQ has credits again for this waiting connection (its turn): take them and tell the peer. */
    void creditsAvailable() {
        post();
        afterPost.run();
    }

    /** Receives posted and not completed yet. */
    int outstanding() {
        return posted;
    }

    /** A new subscriber ({@code callbacks}: deliver on its worker, or null: on this thread). */
    void subscribe(FluxSink<RdmaMessage> s, Scheduler callbacks) {
        if (sink != null) {
            s.error(new IllegalStateException(description + ": receive() already has a subscriber"));
            return;
        }
        sink = s;
        worker = callbacks == null ? null : callbacks.createWorker();
        flow.cancelDemand();
        deliver(); // a closed connection completes the new subscriber at once
    }

    void request(FluxSink<RdmaMessage> s, long n) {
        if (sink != s) {
            return;
        }
        flow.request(n);
        post();
        afterPost.run();
        deliver();
    }

    void cancel(FluxSink<RdmaMessage> s) {
        if (sink != s) {
            return;
        }
        sink = null;
        flow.cancelDemand();
        if (worker != null) {
            Scheduler.Worker w = worker;
            worker = null;
            w.schedule(w::dispose); // after the deliveries already handed to it
        }
        if (finished) {
            dropUndelivered(); // nobody can take them any more
        }
    }

    /** Posts receives for the demand not covered yet, into free buffers, as one chain. */
    void post() {
        if (closing) {
            return;
        }
        if (shared != null) {
            shared.post(flow, undelivered.size());
            return;
        }
        int n = flow.receivesToPost(freeCount, undelivered.size());
        if (n <= 0) {
            return;
        }
        wr.clear();
        long now = System.nanoTime();
        for (int k = 0; k < n; k++) {
            int index = free[--freeCount];
            PendingOperation p = pending.acquire(target, OperationType.RECEIVE, null, index, now);
            batch[k] = p;
            EngineBuffer b = buffers[index];
            wr.add(p.wrId(), b.address(), bufferSize, b.lkey());
        }
        int accepted = n;
        RuntimeException failure = null;
        try {
            qp.postReceive(wr);
        } catch (PostRefusedException e) {
            accepted = Math.min(e.failedIndex(), n);
            // ENOMEM: the receive queue is full for now. The refused buffers wait for the next post (a
            // completion, a release or a request makes one); any other refusal means the connection is broken.
            failure = e.errno() == io.reactiverdma.natives.Errno.ENOMEM ? null : e;
        } catch (RuntimeException e) {
            accepted = 0;
            failure = e;
        }
        // The requests before the refused one were posted: they stay pending and complete (or flush) like
        // any other. Only the refused one and those after it come back.
        for (int k = accepted; k < n; k++) {
            free[freeCount++] = batch[k].receiveIndex;
            pending.free(batch[k]);
        }
        for (int k = 0; k < n; k++) {
            batch[k] = null;
        }
        if (accepted > 0) {
            flow.receivesPosted(accepted);
            posted += accepted;
            metrics.outstanding(accepted);
        }
        if (failure != null) {
            closing = true;
            postFailed.accept(failure);
        }
    }

    /** A posted receive completed: a message to deliver, or (flushed, failed) a free buffer again. */
    void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags) {
        posted--;
        if (!success) {
            flow.receiveFlushed();
            free[freeCount++] = index;
            return;
        }
        arrived(buffers[index], index, generations[index], opcode, byteLen, imm, wcFlags);
    }

    /** A message for this connection landed in the SRQ's buffer {@code index} (see {@link SharedReceives}). */
    void sharedArrived(EngineBuffer buffer, int index, int generation, int opcode, int byteLen, int imm, int wcFlags) {
        arrived(buffer, index, generation, opcode, byteLen, imm, wcFlags);
    }

    private void arrived(EngineBuffer buffer, int index, int generation, int opcode, int byteLen, int imm, int wcFlags) {
        flow.received();
        // A WRITE_WITH_IMM's data went to the WRITE's target; the receive buffer holds nothing.
        int length = opcode == WcOpcode.RECV_RDMA_WITH_IMM.value() ? 0 : byteLen;
        undelivered.add(new EngineMessage(this, buffer, index, generation, length,
                (wcFlags & WcFlags.WITH_IMM) != 0, imm));
        afterPost.run();
        deliver();
    }

    /** A pending receive whose completion will never come (its QP was destroyed first). */
    void abandonPosted(PendingOperation p) {
        int index = p.receiveIndex;
        long latencyNs = System.nanoTime() - p.postedNs;
        pending.free(p);
        posted--;
        metrics.outstanding(-1);
        metrics.completed(OperationType.RECEIVE, false, true, latencyNs, 0);
        flow.receiveFlushed();
        free[freeCount++] = index;
    }

    /** A message's buffer came back ({@link EngineMessage#run()}). */
    void released(EngineMessage m) {
        if (shared != null) {
            shared.released(m.index, m.generation);
            if (!finished) {
                post();
                afterPost.run();
            }
            return;
        }
        if (generations[m.index] != m.generation) {
            throw new IllegalStateException(description + ": receive buffer " + m.index + " came back from generation "
                    + m.generation + " but is at " + generations[m.index] + " (released twice inside the engine)");
        }
        generations[m.index]++;
        if (finished) {
            buffers[m.index].release();
            metrics.receiveMemory(-bufferSize);
            return;
        }
        free[freeCount++] = m.index;
        post();
        afterPost.run();
    }

    /** Hands messages to the subscriber as far as its demand goes; completes it once finished and empty. */
    void deliver() {
        if (delivering) {
            return;
        }
        delivering = true;
        try {
            while (sink != null) {
                if (flow.demand() > 0 && !undelivered.isEmpty()) {
                    EngineMessage m = undelivered.poll();
                    flow.delivered();
                    emit(sink, m);
                } else if (finished && undelivered.isEmpty()) {
                    FluxSink<RdmaMessage> s = sink;
                    sink = null;
                    terminate(s);
                } else {
                    return;
                }
            }
        } finally {
            delivering = false;
        }
    }

    private void emit(FluxSink<RdmaMessage> s, EngineMessage m) {
        if (worker == null) {
            s.next(m);
        } else {
            worker.schedule(() -> s.next(m));
        }
    }

    private void terminate(FluxSink<RdmaMessage> s) {
        Throwable error = terminalError;
        Runnable signal = error != null ? () -> s.error(error) : s::complete;
        Scheduler.Worker w = worker;
        worker = null;
        if (w == null) {
            signal.run();
        } else {
            w.schedule(() -> {
                signal.run();
                w.dispose();
            });
        }
    }

    /** The connection starts closing: no receive is posted any more. */
    void close() {
        closing = true;
    }

    /**
     * The connection is closed (the QP destroyed, every receive completed or abandoned): free buffers go
     * back to the pool now, the others when their messages are released; the subscriber gets what arrived
     * before the close, then {@code error} (or completion when null).
     */
    void finish(Throwable error) {
        closing = true;
        finished = true;
        terminalError = error;
        for (int k = 0; k < freeCount; k++) {
            buffers[free[k]].release();
        }
        metrics.receiveMemory(-(long) freeCount * bufferSize);
        freeCount = 0;
        if (shared != null) {
            shared.leave();
        }
        if (sink == null) {
            dropUndelivered();
        }
        deliver();
    }

    private void dropUndelivered() {
        EngineMessage m;
        while ((m = undelivered.poll()) != null) {
            m.release();
        }
    }

    int undeliveredCount() {
        return undelivered.size();
    }
}
