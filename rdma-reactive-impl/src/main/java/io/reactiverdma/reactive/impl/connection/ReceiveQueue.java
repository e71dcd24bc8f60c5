package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.support.CallbackWorker;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;

import java.util.function.Function;

/**
 * The receive side of one connection, owned by its poller thread: receives made available only for the
 * subscriber's demand (by its {@link ReceiveSource}: its own receive queue, posted as one chain once per
 * poller cycle, or its share of a shared receive queue), delivery in arrival order, and buffers coming back
 * by generation-stamped {@link EngineMessage} handles ({@code receive()}) or, for a decoding subscriber
 * ({@code receive(decoder)}), as soon as the decoder returns from the {@link LentMessage} it was lent: that
 * path creates nothing per message.
 *
 * <p>Demand is counted here, on the poller thread, for every way of delivering: directly (onNext on the
 * poller thread) or on a callback scheduler's worker, one task per message in order. With credits nothing
 * prefetches: no receive is posted beyond what the subscriber asked for. Without credits (a plain peer, or
 * credits off) every free buffer is kept posted (see {@link FlowControl}): what arrives waits here, in
 * order, until the subscriber asks for it. Receives may be posted before the connection is established (the
 * QP is in INIT or RTR): a server posts them before it accepts, so the peer's first message finds one.
 *
 * <p>Not thread-safe: every method runs on the poller thread (asserted: {@link OwnerThread}). A subscriber
 * that requests or releases from onNext re-enters {@link #deliver()}, which then only counts; the loop
 * already running delivers.
 */
final class ReceiveQueue {
    private final String description;
    private final CompletionPoller poller;
    private final FlowControl flow;
    /** Its own receive queue's buffers (none on a shared receive queue): the lent message's views. */
    private final EngineBuffer[] buffers;
    /** Where the receives come from and the buffers go back to. */
    private final ReceiveSource source;
    /**
     * Arrived messages not delivered yet, in order. A message handle ({@link EngineMessage}) is made only when
     * a message is emitted to a {@code receive()} subscriber; a decoding subscriber gets the
     * {@link LentMessage} flyweight instead.
     */
    private final ArrivalRing arrivals;
    /** The flyweight lent to a decoder (created with the first decoding subscriber). */
    private LentMessage lent;
    /**
     * Asks the poller for the connection's flush at the end of its cycle: receives for new demand or
     * returned buffers are posted there, once per cycle as one chain, and a credit update follows if due.
     */
    private final Runnable flushRequest;
    private FluxSink<Object> sink;
    /** The subscriber's decoder (see {@link #subscribe}), or null: messages are emitted as handles. */
    private Function<? super RdmaMessage, ?> decoder;
    private CallbackWorker worker;
    private boolean delivering;
    private boolean closing;
    private boolean finished;
    private Throwable terminalError;

    /**
     * A receive queue fed by {@code source} ({@code buffers}: its own receive queue's, empty on a shared
     * receive queue, where the arrival ring grows if a peer without credits sends more).
     */
    ReceiveQueue(String description, CompletionPoller poller, FlowControl flow, EngineBuffer[] buffers,
            ReceiveSource source, Runnable flushRequest) {
        this.description = description;
        this.poller = poller;
        this.flow = flow;
        this.buffers = buffers;
        this.source = source;
        this.flushRequest = flushRequest;
        this.arrivals = new ArrivalRing(buffers.length);
        source.attach(this);
    }

    CompletionPoller poller() {
        return poller;
    }

    String description() {
        return description;
    }

    boolean isFinished() {
        return finished;
    }

    /** Where its receives come from (for tests). */
    ReceiveSource source() {
        return source;
    }

    /** Whether the closing connection's QP is destroyed through {@link #beforeDestroy} (on a shared receive queue). */
    boolean isShared() {
        return source.drainsBeforeDestroy();
    }

    /** On a shared receive queue: runs {@code destroy} once the QP may be destroyed. Poller thread. */
    void beforeDestroy(Runnable destroy) {
        source.beforeDestroy(destroy);
    }

    /** QP_LAST_WQE_REACHED for this connection's QP (only a QP on a shared receive queue has it). Poller thread. */
    void lastWorkRequestReached() {
        source.lastWorkRequestReached();
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
        assert OwnerThread.check(poller);
        // Only when credits were taken does the peer need telling: a flush requested for nothing would post
        // again, wait again, and (through the SRQ's refill) ask the other waiters again, for ever.
        if (!closing && source.post(flow, arrivals.count()) > 0) {
            flushRequest.run();
        }
    }

    /** Receives posted and not completed yet. */
    int outstanding() {
        return source.outstanding();
    }

    /**
     * A new subscriber ({@code callbacks}: deliver on its worker, or null: on this thread). With a
     * {@code decoder}, each message is lent to it here, on the poller thread, and its buffer goes back at
     * once; the subscriber gets what the decoder returned.
     */
    void subscribe(FluxSink<Object> s, Function<? super RdmaMessage, ?> decoder, Scheduler callbacks) {
        assert OwnerThread.check(poller);
        if (sink != null) {
            s.error(new InvalidRequestException(InvalidRequestException.Reason.ALREADY_SUBSCRIBED, description
                    + ": receive() already has a subscriber"));
            return;
        }
        sink = s;
        this.decoder = decoder;
        if (decoder != null && lent == null) {
            lent = new LentMessage(buffers);
        }
        worker = CallbackWorker.of(callbacks);
        flow.cancelDemand();
        deliver(); // a closed connection completes the new subscriber at once
    }

    void request(FluxSink<Object> s, long n) {
        assert OwnerThread.check(poller);
        if (sink != s) {
            return;
        }
        flow.request(n);
        flushRequest.run();
        deliver();
    }

    void cancel(FluxSink<Object> s) {
        assert OwnerThread.check(poller);
        if (sink != s) {
            return;
        }
        sink = null;
        decoder = null;
        flow.cancelDemand();
        if (worker != null) {
            CallbackWorker w = worker;
            worker = null;
            w.disposeAfterDeliveries();
        }
        if (finished) {
            dropUndelivered(); // nobody can take them any more
        }
    }

    /** Makes receives available for the demand not covered yet (its own: one chain, once per poller cycle). */
    void post() {
        assert OwnerThread.check(poller);
        if (!closing) {
            source.post(flow, arrivals.count());
        }
    }

    /** A posted receive of its own completed: a message to deliver, or (flushed, failed) a free buffer again. */
    void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags) {
        source.completed(index, success, opcode, byteLen, imm, wcFlags);
    }

    /** A message for this connection landed in buffer {@code index} (its own, or its shared receive queue's). */
    void arrived(EngineBuffer buffer, int index, int generation, int opcode, int byteLen, int imm, int wcFlags) {
        assert OwnerThread.check(poller);
        flow.received();
        // A WRITE_WITH_IMM's data went to the WRITE's target; the receive buffer holds nothing.
        arrivals.push(buffer, index, generation, opcode == WcOpcode.RECV_RDMA_WITH_IMM.value() ? 0 : byteLen,
                (wcFlags & WcFlags.WITH_IMM) != 0, imm);
        flushRequest.run(); // the peer may be short of credits now (see FlowControl)
        deliver();
    }

    /** A pending receive of its own whose completion will never come (its QP was destroyed first). */
    void abandonPosted(PendingOperation p) {
        source.abandonPosted(p);
    }

    /** A message's buffer came back ({@link EngineMessage#run()}). */
    void released(EngineMessage m) {
        assert OwnerThread.check(poller);
        giveBack(m.index, m.generation);
    }

    /** Buffer {@code index} of generation {@code generation} came back to its source; the next flush reposts. */
    private void giveBack(int index, int generation) {
        source.giveBack(index, generation, finished);
        if (!finished) {
            flushRequest.run();
        }
    }

    /** Hands messages to the subscriber as far as its demand goes; completes it once finished and empty. */
    void deliver() {
        assert OwnerThread.check(poller);
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
            value = decoder.apply(lent.lend(source.lendable(buffer), index, arrivals.length(at),
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
        } else if (!worker.schedule(() -> nextUnlessCancelled(s, m))) { // the application disposed its scheduler
            if (m instanceof EngineMessage message) {
                message.release();
            }
            sink = null;
            decoder = null;
            flow.cancelDemand();
            end(s, worker.refusal());
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
        CallbackWorker w = worker;
        worker = null;
        if (w == null) {
            signal.run();
        } else {
            w.endWith(signal);
        }
    }

    /** The connection starts closing: no receive is posted any more. */
    void close() {
        assert OwnerThread.check(poller);
        closing = true;
    }

    /**
     * The connection is closed (the QP destroyed, every receive completed or abandoned): free buffers go
     * back to the pool now, the others when their messages are released; the subscriber gets what arrived
     * before the close, then {@code error} (or completion when null).
     */
    void finish(Throwable error) {
        assert OwnerThread.check(poller);
        closing = true;
        finished = true;
        terminalError = error;
        source.finish();
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
}
