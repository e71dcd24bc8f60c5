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

import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The receive side of one connection, owned by its poller thread: the receive buffers, receives posted
 * only for the subscriber's demand (as one chained post, once per poller cycle: what a cycle's requests
 * and returned buffers made postable goes in one {@code ibv_post_recv}), delivery in arrival order, and
 * buffers coming back by generation-stamped {@link EngineMessage} handles ({@code receive()}) or, for a
 * decoding subscriber ({@code receive(decoder)}), as soon as the decoder returns from the
 * {@link LentMessage} it was lent: that path creates nothing per message.
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
    /**
     * Arrived messages not delivered yet, in order: a ring of receive-buffer indices (at most one entry per
     * buffer, so {@code depth} entries), with each buffer's arrival in {@link #lengths}/{@link #immediates}.
     * A message handle ({@link EngineMessage}) is made only when a message is emitted to a
     * {@code receive()} subscriber; a decoding subscriber gets the {@link LentMessage} flyweight instead.
     */
    private final int[] arrived;
    private int arrivedHead;
    private int arrivedCount;
    private final int[] lengths;
    private final int[] immediates;
    private final boolean[] withImmediate;
    /** The flyweight lent to a decoder (created with the first decoding subscriber). */
    private LentMessage lent;
    /**
     * Asks the poller for the connection's flush at the end of its cycle: receives for new demand or
     * returned buffers are posted there, once per cycle as one chain, and a credit update follows if due.
     */
    private final Runnable flushRequest;
    /** A refused post: the connection cannot go on. */
    private final Consumer<Throwable> postFailed;
    private FluxSink<Object> sink;
    /** The subscriber's decoder (see {@link #subscribe}), or null: messages are emitted as handles. */
    private Function<? super RdmaMessage, ?> decoder;
    private Scheduler.Worker worker;
    private boolean delivering;
    private boolean closing;
    private boolean finished;
    private Throwable terminalError;
    private int posted;

    ReceiveQueue(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, FlowControl flow, EngineMetrics metrics, EngineBuffer[] buffers, int bufferSize,
            Runnable flushRequest, Consumer<Throwable> postFailed) {
        this.description = description;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.poller = poller;
        this.flow = flow;
        this.metrics = metrics;
        this.buffers = buffers;
        this.bufferSize = bufferSize;
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        int depth = buffers.length;
        this.generations = new int[depth];
        this.free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        this.freeCount = depth;
        this.wr = new ReceiveWorkRequests(depth, 1);
        this.batch = new PendingOperation[depth];
        this.arrived = new int[depth];
        this.lengths = new int[depth];
        this.immediates = new int[depth];
        this.withImmediate = new boolean[depth];
    }

    CompletionPoller poller() {
        return poller;
    }

    /** Receives posted and not completed yet. */
    int outstanding() {
        return posted;
    }

    /**
     * A new subscriber ({@code callbacks}: deliver on its worker, or null: on this thread). With a
     * {@code decoder}, each message is lent to it here, on the poller thread, and its buffer goes back at
     * once; the subscriber gets what the decoder returned.
     */
    void subscribe(FluxSink<Object> s, Function<? super RdmaMessage, ?> decoder, Scheduler callbacks) {
        if (sink != null) {
            s.error(new IllegalStateException(description + ": receive() already has a subscriber"));
            return;
        }
        sink = s;
        this.decoder = decoder;
        if (decoder != null && lent == null) {
            lent = new LentMessage(buffers);
        }
        worker = callbacks == null ? null : callbacks.createWorker();
        flow.cancelDemand();
        deliver(); // a closed connection completes the new subscriber at once
    }

    void request(FluxSink<Object> s, long n) {
        if (sink != s) {
            return;
        }
        flow.request(n);
        flushRequest.run();
        deliver();
    }

    void cancel(FluxSink<Object> s) {
        if (sink != s) {
            return;
        }
        sink = null;
        decoder = null;
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

    /** Posts receives for the demand not covered yet, into free buffers, as one chain (once per poller cycle). */
    void post() {
        if (closing) {
            return;
        }
        int n = flow.receivesToPost(freeCount, arrivedCount);
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
        flow.received();
        // A WRITE_WITH_IMM's data went to the WRITE's target; the receive buffer holds nothing.
        lengths[index] = opcode == WcOpcode.RECV_RDMA_WITH_IMM.value() ? 0 : byteLen;
        withImmediate[index] = (wcFlags & WcFlags.WITH_IMM) != 0;
        immediates[index] = withImmediate[index] ? imm : 0;
        arrived[(arrivedHead + arrivedCount) % arrived.length] = index;
        arrivedCount++;
        flushRequest.run(); // the peer may be short of credits now (see FlowControl)
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
        if (generations[m.index] != m.generation) {
            throw new IllegalStateException(description + ": receive buffer " + m.index + " came back from generation "
                    + m.generation + " but is at " + generations[m.index] + " (released twice inside the engine)");
        }
        recycle(m.index);
    }

    /** Buffer {@code index} is free again: reposted by the next flush, or back to the pool once finished. */
    private void recycle(int index) {
        generations[index]++;
        if (finished) {
            buffers[index].release();
            return;
        }
        free[freeCount++] = index;
        flushRequest.run();
    }

    /** Hands messages to the subscriber as far as its demand goes; completes it once finished and empty. */
    void deliver() {
        if (delivering) {
            return;
        }
        delivering = true;
        try {
            while (sink != null) {
                if (flow.demand() > 0 && arrivedCount > 0) {
                    int index = arrived[arrivedHead];
                    arrivedHead = (arrivedHead + 1) % arrived.length;
                    arrivedCount--;
                    flow.delivered();
                    if (decoder == null) {
                        emit(sink, new EngineMessage(this, buffers[index], index, generations[index], lengths[index],
                                withImmediate[index], immediates[index]));
                    } else {
                        decode(sink, index);
                    }
                } else if (finished && arrivedCount == 0) {
                    FluxSink<Object> s = sink;
                    sink = null;
                    decoder = null;
                    terminate(s);
                } else {
                    return;
                }
            }
        } finally {
            delivering = false;
        }
    }

    /**
     * Lends message {@code index} to the decoder, takes the buffer back, and emits the result. A decoder
     * that throws (or returns null) ends the subscription with that error; its buffer comes back all the same.
     */
    private void decode(FluxSink<Object> s, int index) {
        Object value;
        try {
            value = decoder.apply(lent.lend(index, lengths[index], withImmediate[index], immediates[index]));
            if (value == null) {
                throw new NullPointerException("the receive decoder returned null");
            }
        } catch (Throwable t) {
            lent.end();
            recycle(index);
            sink = null;
            decoder = null;
            flow.cancelDemand();
            s.error(t);
            return;
        }
        lent.end();
        recycle(index);
        emit(s, value);
    }

    private void emit(FluxSink<Object> s, Object m) {
        if (worker == null) {
            s.next(m);
        } else {
            worker.schedule(() -> s.next(m));
        }
    }

    private void terminate(FluxSink<Object> s) {
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
        freeCount = 0;
        if (sink == null) {
            dropUndelivered();
        }
        deliver();
    }

    /** Nobody can take the arrived messages any more: their buffers come back. */
    private void dropUndelivered() {
        while (arrivedCount > 0) {
            int index = arrived[arrivedHead];
            arrivedHead = (arrivedHead + 1) % arrived.length;
            arrivedCount--;
            recycle(index);
        }
    }

    int undeliveredCount() {
        return arrivedCount;
    }
}
