package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Operators;
import io.reactiverdma.reactive.impl.support.CallbackWorker;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.util.ArrayDeque;

/**
 * The subscriber side of {@code receive()} or of one {@code join(group)}: datagrams routed to it wait here,
 * each holding its receive buffer, until the subscriber asks for them. Demand is counted here, on the poller
 * thread, as a connection's receive side counts it, and each datagram is emitted on the poller thread or, with
 * a callback scheduler, on its worker (one task per datagram, in order). Poller thread only, but for
 * {@link #cancel()}.
 *
 * <p>A subscriber may cancel from inside {@code onNext} ({@code next()}, {@code blockFirst()}) or from any
 * other thread while the poller is emitting. What is emitted into a cancelled sink is dropped by Reactor
 * without the engine seeing it: that datagram's buffer would be lost for good, and after
 * {@code RECEIVE_QUEUE_DEPTH} such losses the endpoint would receive nothing again. So the cancel is seen at
 * once (a volatile flag set on the cancelling thread) and checked before every emission, where a datagram
 * meant for a cancelled subscriber is released instead.
 */
final class DatagramStream {
    private final ArrayDeque<EngineDatagram> queue = new ArrayDeque<>();
    private final FluxSink<RdmaDatagramMessage> sink;
    @Nullable
    private CallbackWorker worker;
    private long demand;
    private volatile boolean cancelled;
    private boolean done;

    DatagramStream(FluxSink<RdmaDatagramMessage> sink, @Nullable Scheduler callbacks) {
        this.sink = sink;
        this.worker = CallbackWorker.of(callbacks);
    }

    void offer(EngineDatagram d) {
        if (done) {
            d.release();
            return;
        }
        queue.add(d);
        drain();
    }

    /** The subscriber asked for {@code n} more. */
    void request(long n) {
        demand = Operators.addCap(demand, n);
        drain();
    }

    /** Emits what is queued, as far as the subscriber's demand goes, unless it left. */
    void drain() {
        while (!done && !queue.isEmpty()) {
            if (isCancelled()) {
                cancelled();
                return;
            }
            if (demand <= 0) {
                return;
            }
            if (demand != Long.MAX_VALUE) {
                demand--;
            }
            emit(queue.poll());
        }
    }

    private void emit(EngineDatagram d) {
        CallbackWorker w = worker;
        if (w == null) {
            nextUnlessCancelled(d);
        } else if (!w.schedule(() -> nextUnlessCancelled(d))) { // the application disposed its scheduler
            d.release();
            error(w.refusal());
        }
    }

    private void nextUnlessCancelled(EngineDatagram d) {
        if (isCancelled()) {
            d.release();
        } else {
            sink.next(d);
        }
    }

    /** Whether the subscriber left (its cancel may not have reached the poller yet). */
    boolean isCancelled() {
        return cancelled || sink.isCancelled();
    }

    /** Any thread: the subscriber left; nothing more is emitted to it. */
    void cancel() {
        cancelled = true;
    }

    /** The endpoint closed: what was not delivered goes back, the subscriber completes (after its deliveries). */
    void complete() {
        end(null);
    }

    /** The group could not be joined: the subscriber fails. */
    void error(Throwable error) {
        end(error);
    }

    private void end(@Nullable Throwable error) {
        if (isCancelled()) { // nobody to tell; its worker (if any) is disposed after its queued deliveries
            cancelled();
            return;
        }
        CallbackWorker w = worker;
        cancelled();
        Runnable signal = error != null ? () -> sink.error(error) : sink::complete;
        if (w == null) {
            signal.run();
        } else {
            w.endWith(signal);
        }
    }

    /** The subscriber left (or the stream ended): what it did not take goes back. */
    void cancelled() {
        if (done) {
            return;
        }
        done = true;
        CallbackWorker w = worker;
        worker = null;
        if (w != null && isCancelled()) {
            w.disposeAfterDeliveries();
        }
        EngineDatagram d;
        while ((d = queue.poll()) != null) {
            d.release();
        }
    }
}
