package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaMetricsRecorder.DatagramOutcome;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.connection.OwnerThread;
import io.reactiverdma.reactive.impl.connection.ReceiveRing;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The receive side of a datagram endpoint, owned by its poller thread (asserted: {@link OwnerThread}): the
 * receive buffers (slices of one registered slab, each 40 bytes of GRH then up to the MTU of payload) on the
 * engine's {@link ReceiveRing}, so released buffers are posted again in chains, once an eighth of them is
 * free (or half of them is not posted), at the end of a poller cycle; the GRH read to route each datagram to
 * the {@code receive()} stream or its group's stream, at the end of the poller cycle (after the tasks handed
 * over) for a datagram whose stream is not there yet; and what nobody takes dropped and counted.
 */
final class DatagramReceiver {
    private final String description;
    private final CompletionPoller poller;
    private final EngineMetrics metrics;
    private final EngineBuffer slab;
    private final ReceiveRing ring;
    private final int repostBatch;
    private final Runnable flushRequest;
    /** A refused post (other than a full queue): the endpoint cannot go on. */
    private final Consumer<Throwable> postFailed;
    @Nullable
    private final Scheduler callbacks;
    private int posted;
    private boolean closed;
    @Nullable
    private DatagramStream unicast;
    private final Map<InetAddress, DatagramStream> groups = new HashMap<>();
    private volatile long dropped;
    /** Buffers whose datagram waits for the end of the cycle to be routed, in arrival order. */
    private final IndexQueue waiting;
    /** What each buffer's completion said, kept while it waits: its payload length, immediate, flags, sender. */
    private final int[] arrivedLength;
    private final int[] arrivedImm;
    private final int[] arrivedFlags;
    private final int[] arrivedSourceQpn;

    DatagramReceiver(String description, BufferPool pool, int depth, int bufferSize, QueuePair qp,
            PendingOperations pending, CompletionTarget target, CompletionPoller poller, EngineMetrics metrics,
            Runnable flushRequest, Consumer<Throwable> postFailed, @Nullable Scheduler callbacks) {
        this.description = description;
        this.poller = poller;
        this.metrics = metrics;
        this.flushRequest = flushRequest;
        this.postFailed = postFailed;
        this.callbacks = callbacks;
        this.slab = (EngineBuffer) pool.allocateRegistered(depth * bufferSize);
        EngineBuffer[] buffers = new EngineBuffer[depth];
        for (int i = 0; i < depth; i++) {
            buffers[i] = (EngineBuffer) slab.slice(i * bufferSize, bufferSize);
        }
        this.ring = new ReceiveRing("receive buffers of " + description, buffers, bufferSize, depth, pending, target,
                qp::postReceive);
        this.repostBatch = Math.max(1, depth / 8);
        this.waiting = new IndexQueue(depth);
        this.arrivedLength = new int[depth];
        this.arrivedImm = new int[depth];
        this.arrivedFlags = new int[depth];
        this.arrivedSourceQpn = new int[depth];
    }

    CompletionPoller poller() {
        return poller;
    }

    long dropped() {
        return dropped;
    }

    /** Receives posted and not completed yet. */
    int outstanding() {
        return posted;
    }

    /** A stream for {@code receive()} or one group's {@code join}, delivering on the callback scheduler if any. */
    DatagramStream newStream(FluxSink<RdmaDatagramMessage> sink) {
        return new DatagramStream(sink, callbacks);
    }

    /**
     * {@code receive()}: subscription, requests and cancellation are handed to the poller thread, which
     * delivers as far as the demand goes (there, or on the callback scheduler's worker).
     */
    Flux<RdmaDatagramMessage> receive() {
        return Flux.<RdmaDatagramMessage>create(sink -> {
            DatagramStream s = newStream(sink);
            poller.execute(() -> {
                if (!subscribe(s)) {
                    sink.error(new InvalidRequestException(InvalidRequestException.Reason.ALREADY_SUBSCRIBED,
                            "receive() of " + description + " already has a subscriber"));
                }
            });
            sink.onRequest(n -> poller.execute(() -> s.request(n)));
            sink.onDispose(() -> {
                s.cancel(); // seen by an emission under way on the poller, which then releases instead
                poller.execute(() -> unsubscribe(s));
            });
        }, FluxSink.OverflowStrategy.BUFFER).doOnDiscard(RdmaDatagramMessage.class, RdmaDatagramMessage::release);
    }

    /**
     * Posts the free buffers as one chain when enough are free to be worth a doorbell, or when too few are
     * posted to risk waiting. Returns the receives posted. End of a poller cycle.
     */
    int post() {
        assert OwnerThread.check(poller);
        routeWaiting();
        int free = ring.freeCount();
        if (closed || free == 0 || (free < repostBatch && posted > ring.depth() / 2)) {
            return 0;
        }
        int accepted = ring.post(free);
        posted += accepted;
        RuntimeException refusal = ring.refusal();
        if (refusal != null) {
            closed = true;
            postFailed.accept(refusal);
        }
        return accepted;
    }

    /**
     * A posted receive completed into buffer {@code index}. A datagram with no live stream to go to yet waits
     * for the end of this poller cycle ({@link #post()}): its stream's subscription may be a task handed over
     * before the datagram arrived that this thread has not run yet, because it polls before it runs tasks.
     * Those after it wait too, so that datagrams are delivered in the order they arrived.
     */
    void completed(int index, int status, int byteLen, int imm, int wcFlags, int sourceQpn) {
        assert OwnerThread.check(poller);
        posted--;
        if (status != WcStatus.SUCCESS.value()) {
            ring.free(index);
            if (!closed) {
                drop(0);
                flushRequest.run();
            }
            return;
        }
        arrivedLength[index] = byteLen - Grh.SIZE;
        arrivedImm[index] = imm;
        arrivedFlags[index] = wcFlags;
        arrivedSourceQpn[index] = sourceQpn;
        if (waiting.isEmpty() && route(index, false)) {
            return;
        }
        waiting.add(index);
        flushRequest.run();
    }

    /**
     * Hands the datagram in buffer {@code index} to its stream, or drops it (closed, too short, or, once
     * {@code last}, nobody's). False, with nothing done, when its stream is not there yet and it is not
     * {@code last}.
     */
    private boolean route(int index, boolean last) {
        EngineBuffer b = ring.buffer(index);
        ByteBuffer memory = b.memory();
        int base = b.offset();
        int length = arrivedLength[index];
        InetAddress to = Grh.destination(memory, base);
        DatagramStream target = closed || length < 0 ? null : to.isMulticastAddress() ? groups.get(to) : unicast;
        if (target != null && target.isCancelled()) {
            target = null; // gone: a subscriber taking over from it may be a task not run yet
        }
        if (target == null && !last && !closed && length >= 0) {
            return false;
        }
        if (target == null || !slab.retain()) {
            drop(Math.max(0, length));
            ring.free(index);
            flushRequest.run();
            return true;
        }
        metrics.datagram(DatagramOutcome.RECEIVED, length);
        target.offer(new EngineDatagram(this, b, index, ring.generation(index), length,
                new InetSocketAddress(Grh.source(memory, base), 0), arrivedSourceQpn[index],
                to.isMulticastAddress() ? new InetSocketAddress(to, 0) : null,
                (arrivedFlags[index] & WcFlags.WITH_IMM) != 0, arrivedImm[index]));
        return true;
    }

    /** The datagrams that waited for the tasks of this cycle go to their streams now, or are dropped. */
    private void routeWaiting() {
        while (!waiting.isEmpty()) {
            route(waiting.remove(), true);
        }
    }

    /** A datagram was released: its buffer is posted again by a coming flush (or kept once closed). */
    void released(EngineDatagram d) {
        assert OwnerThread.check(poller);
        ring.giveBack(d.index, d.generation);
        slab.unretain();
        if (!closed) {
            flushRequest.run();
        }
    }

    private void drop(int bytes) {
        dropped++;
        metrics.datagram(DatagramOutcome.DROPPED, bytes);
    }

    // ------------------------------------------------------------------------ streams (poller thread)

    /** A new {@code receive()} subscriber; false when another one is subscribed. */
    private boolean subscribe(DatagramStream s) {
        assert OwnerThread.check(poller);
        if (closed) {
            s.complete();
            return true;
        }
        if (unicast != null && !unicast.isCancelled()) {
            return false;
        }
        // A subscriber that cancelled on the poller (from its onNext) is gone even if its own clean-up task is
        // still queued behind this one: a next subscriber that saw it disposed must not be refused (seen on
        // rxe: the refused one waited for datagrams for ever).
        if (unicast != null) {
            unicast.cancelled();
        }
        unicast = s;
        s.drain();
        return true;
    }

    private void unsubscribe(DatagramStream s) {
        assert OwnerThread.check(poller);
        if (unicast == s) {
            unicast = null;
        }
        s.cancelled();
    }

    /** Datagrams to {@code group} go to {@code s} from now on. */
    void joinStream(InetAddress group, DatagramStream s) {
        assert OwnerThread.check(poller);
        if (closed) {
            s.complete();
        } else {
            groups.put(group, s);
            s.drain();
        }
    }

    /** The group's subscriber left, or its join failed ({@code error}, else null). */
    void leaveStream(InetAddress group, DatagramStream s, @Nullable Throwable error) {
        assert OwnerThread.check(poller);
        groups.remove(group, s);
        if (error != null) {
            s.error(error);
        } else {
            s.cancelled();
        }
    }

    /** The endpoint closes: nothing is posted any more; every stream completes. */
    void close() {
        assert OwnerThread.check(poller);
        closed = true;
        routeWaiting(); // dropped: closed
        if (unicast != null) {
            unicast.complete();
            unicast = null;
        }
        for (DatagramStream s : new ArrayList<>(groups.values())) {
            s.complete();
        }
        groups.clear();
    }

    /** The poller failed: no posted receive will complete any more. */
    void abandonPosted() {
        assert OwnerThread.check(poller);
        posted = 0;
    }

    /**
     * The QP is destroyed: the slab goes back once the datagrams still held are released (each holds it).
     * rdma_cm thread.
     */
    void releaseMemory() {
        slab.release();
    }

    @Override
    public String toString() {
        return description;
    }
}
