package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
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
 * poller thread) or on a callback scheduler's worker, one task per message in order. With credits nothing
 * prefetches: no receive is posted beyond what the subscriber asked for. Without credits (a plain peer, or
 * credits off) every free buffer is kept posted (see {@link FlowControl}): what arrives waits here, in
 * order, until the subscriber asks for it. Receives may be posted before the connection is established (the
 * QP is in INIT or RTR): a server posts them before it accepts, so the peer's first message finds one.
 *
 * <p>Not thread-safe: every method runs on the poller thread. A subscriber that requests or releases from
 * onNext re-enters {@link #deliver()}, which then only counts; the loop already running delivers.
 */
final class ReceiveQueue {
    private final String description;
    private final PendingOperations pending;
    private final CompletionPoller poller;
    private final FlowControl flow;
    private final EngineMetrics metrics;
    private final EngineBuffer[] buffers;
    /** Its own buffers and their post loop (none on a shared receive queue). */
    private final ReceiveRing ring;
    private final int bufferSize;
    /**
     * Arrived messages not delivered yet, in order. A message handle ({@link EngineMessage}) is made only when
     * a message is emitted to a {@code receive()} subscriber; a decoding subscriber gets the
     * {@link LentMessage} flyweight instead.
     */
    private final ArrivalRing arrivals;
    /** Receives come from this shared receive queue instead of {@link #buffers} (null: its own). */
    private SharedReceives.Member shared;
    /** A server connection on a shared receive queue waits for the peer's hello (see {@link #expectPeerHello}). */
    private Runnable peerHello;
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
        this.pending = pending;
        this.poller = poller;
        this.flow = flow;
        this.metrics = metrics;
        this.buffers = buffers;
        this.bufferSize = bufferSize;
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        int depth = buffers.length;
        // One chain for the whole depth: what a poller cycle made postable goes in one ibv_post_recv.
        this.ring = new ReceiveRing(description, buffers, bufferSize, depth, pending, target, qp::postReceive);
        this.arrivals = new ArrivalRing(depth);
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

    boolean isShared() {
        return shared != null;
    }

    /** ESTABLISHED: on a shared receive queue, the wait for the peer's hello is bounded from now. Poller thread. */
    void established() {
        if (shared != null) {
            shared.established();
        }
    }

    /** On a shared receive queue: runs {@code destroy} once the QP may be destroyed. Poller thread. */
    void beforeDestroy(Runnable destroy) {
        shared.beforeDestroy(destroy);
    }

    /** QP_LAST_WQE_REACHED for this connection's QP (only a QP on a shared receive queue has it). Poller thread. */
    void lastWorkRequestReached() {
        if (shared != null) {
            shared.lastWorkRequestReached();
        }
    }

    /** The connection started closing (its QP is destroyed only after this). */
    boolean isClosing() {
        return closing;
    }

    boolean creditsAgreed() {
        return flow.credits();
    }

    /**
     * The SRQ has credits again for this waiting connection: it takes them now, during its turn (the
     * allotment serves waiters in order), and the next flush tells the peer.
     */
    void creditsAvailable() {
        // Only when credits were taken does the peer need telling: a flush requested for nothing would post
        // again, wait again, and (through the SRQ's refill) ask the other waiters again, for ever.
        if (!closing && peerHello == null && shared.post(flow, arrivals.count()) > 0) {
            flushRequest.run();
        }
    }

    /**
     * On a shared receive queue the peer's hello (see {@code CreditWordHandshake}) lands in an SRQ buffer,
     * not in a receive of the handshake's own: the first message to arrive is taken as the hello and
     * {@code arrived} runs instead of delivering it. A posted receive is kept for it: {@code receiveKept} runs
     * once one is (now, or when the SRQ is refilled), and only then may this side say its own hello.
     */
    void expectPeerHello(Runnable arrived, Runnable receiveKept) {
        this.peerHello = arrived;
        shared.expectHello(receiveKept);
    }

    /** Called by the SRQ for a message of this connection: true when it was the awaited hello. */
    boolean takePeerHello() {
        Runnable r = peerHello;
        if (r == null) {
            return false;
        }
        peerHello = null;
        r.run();
        return true;
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
        if (shared != null) {
            // No credit is taken from the SRQ before the peer's hello: it could not be advertised yet, and
            // held unadvertised it would keep other connections' hellos from being given a receive.
            if (peerHello == null) {
                shared.post(flow, arrivals.count());
            }
            return;
        }
        int n = flow.receivesToPost(ring.freeCount(), arrivals.count());
        if (n <= 0) {
            return;
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
            closing = true;
            postFailed.accept(failure);
        }
    }

    /** A posted receive completed: a message to deliver, or (flushed, failed) a free buffer again. */
    void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags) {
        posted--;
        if (!success) {
            flow.receiveFlushed();
            ring.free(index);
            return;
        }
        flow.received();
        arrived(buffers[index], index, ring.generation(index), opcode, byteLen, imm, wcFlags);
    }

    /** A message for this connection landed in the SRQ's buffer {@code index} (see {@link SharedReceives}). */
    void sharedArrived(EngineBuffer buffer, int index, int generation, int opcode, int byteLen, int imm, int wcFlags) {
        flow.received();
        arrived(buffer, index, generation, opcode, byteLen, imm, wcFlags);
    }

    private void arrived(EngineBuffer buffer, int index, int generation, int opcode, int byteLen, int imm, int wcFlags) {
        // A WRITE_WITH_IMM's data went to the WRITE's target; the receive buffer holds nothing.
        arrivals.push(buffer, index, generation, opcode == WcOpcode.RECV_RDMA_WITH_IMM.value() ? 0 : byteLen,
                (wcFlags & WcFlags.WITH_IMM) != 0, imm);
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
        ring.free(index);
    }

    /** A message's buffer came back ({@link EngineMessage#run()}). */
    void released(EngineMessage m) {
        giveBack(m.index, m.generation);
    }

    /** Buffer {@code index} of generation {@code generation} came back: to the SRQ, or to this queue. */
    private void giveBack(int index, int generation) {
        if (shared != null) {
            shared.released(index, generation);
            if (!finished) {
                flushRequest.run();
            }
            return;
        }
        // Free again: reposted by the next flush, or back to the pool once finished.
        if (finished) {
            ring.retire(index, generation);
            metrics.receiveMemory(-bufferSize);
            return;
        }
        ring.giveBack(index, generation);
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
                if (sink.isCancelled()) {
                    // Cancelled on another thread, or from onNext while tasks were queued: the cancel task
                    // has not run yet, but what is emitted now would be dropped unreleased (next(), take(),
                    // timeout() drop with onNextDropped, which no discard hook sees). Stop here; what arrived
                    // stays for a later subscriber or the close.
                    cancel(sink);
                    return;
                }
                if (flow.demand() > 0 && arrivals.count() > 0) {
                    int at = arrivals.pop();
                    EngineBuffer buffer = arrivals.takeBuffer(at);
                    flow.delivered();
                    if (decoder == null) {
                        emit(sink, new EngineMessage(this, buffer, arrivals.index(at), arrivals.generation(at),
                                arrivals.length(at), arrivals.withImmediate(at), arrivals.immediate(at)));
                    } else {
                        decode(sink, buffer, at);
                    }
                } else if (finished && arrivals.count() == 0) {
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
    private void decode(FluxSink<Object> s, EngineBuffer buffer, int at) {
        int index = arrivals.index(at);
        int generation = arrivals.generation(at);
        Object value;
        try {
            // Its own buffers have a view made once; an SRQ buffer gets a view for this message.
            value = decoder.apply(lent.lend(shared == null ? null : buffer, index, arrivals.length(at),
                    arrivals.withImmediate(at), arrivals.immediate(at)));
            if (value == null) {
                throw new NullPointerException("the receive decoder returned null");
            }
        } catch (Throwable t) {
            lent.end();
            giveBack(index, generation);
            sink = null;
            decoder = null;
            flow.cancelDemand();
            end(s, t); // behind the values already handed to the callback worker, which then goes
            return;
        }
        lent.end();
        giveBack(index, generation);
        emit(s, value);
    }

    private void emit(FluxSink<Object> s, Object m) {
        if (worker == null) {
            nextUnlessCancelled(s, m);
        } else {
            worker.schedule(() -> nextUnlessCancelled(s, m));
        }
    }

    /**
     * A cancelled sink's subscriber would drop {@code m} without a discard hook seeing it (onNextDropped): a
     * message is released instead (any thread: the release is handed to the poller). A decoded value holds
     * no buffer. The cancel flag is set by the cancelling thread before its cancel task is handed over.
     */
    private static void nextUnlessCancelled(FluxSink<Object> s, Object m) {
        if (!s.isCancelled()) {
            s.next(m);
        } else if (m instanceof EngineMessage message) {
            message.release();
        }
    }

    private void terminate(FluxSink<Object> s) {
        end(s, terminalError);
    }

    /** Completes {@code s} ({@code error} null) or fails it, on the callback worker after its deliveries. */
    private void end(FluxSink<Object> s, Throwable error) {
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
        metrics.receiveMemory(-(long) ring.releaseFree() * bufferSize);
        if (shared != null) {
            shared.leave();
        }
        if (sink == null) {
            dropUndelivered();
        }
        deliver();
    }

    /** Nobody can take the arrived messages any more: their buffers come back. */
    private void dropUndelivered() {
        while (arrivals.count() > 0) {
            int at = arrivals.pop();
            arrivals.takeBuffer(at);
            giveBack(arrivals.index(at), arrivals.generation(at));
        }
    }

    int undeliveredCount() {
        return arrivals.count();
    }
}
