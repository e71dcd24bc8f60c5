package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.publisher.FluxSink;

import java.util.ArrayDeque;

/**
 * The subscriber side of {@code receive()} or of one {@code join(group)}: datagrams routed to it wait here,
 * each holding its receive buffer, until the subscriber asks for them. Poller thread only, but for
 * {@link #cancel()}.
 *
 * <p>A subscriber may cancel from inside {@code onNext} ({@code next()}, {@code blockFirst()}) or from any
 * other thread while the poller is emitting. A cancelled sink keeps its demand, and what is emitted into it
 * is dropped by Reactor without the engine seeing it: that datagram's buffer would be lost for good, and
 * after {@code RECEIVE_QUEUE_DEPTH} such losses the endpoint would receive nothing again. So the cancel is
 * seen at once (a volatile flag set on the cancelling thread) and checked before every emission; a datagram
 * already handed to Reactor when the cancel lands is released by the stream's discard hook.
 */
final class DatagramStream {
    private final ArrayDeque<EngineDatagram> queue = new ArrayDeque<>();
    private final FluxSink<RdmaDatagramMessage> sink;
    private volatile boolean cancelled;
    private boolean done;

    DatagramStream(FluxSink<RdmaDatagramMessage> sink) {
        this.sink = sink;
    }

    void offer(EngineDatagram d) {
        if (done) {
            d.release();
            return;
        }
        queue.add(d);
        drain();
    }

    /** Emits what is queued, as far as the subscriber's demand goes, unless it left. */
    void drain() {
        while (!done && !queue.isEmpty()) {
            if (cancelled || sink.isCancelled()) {
                cancelled();
                return;
            }
            if (sink.requestedFromDownstream() <= 0) {
                return;
            }
            sink.next(queue.poll());
        }
    }

    /** Whether the subscriber left (its cancel may not have reached the poller yet). */
    boolean isCancelled() {
        return cancelled || sink.isCancelled();
    }

    /** Any thread: the subscriber left; the poller emits nothing more to it. */
    void cancel() {
        cancelled = true;
    }

    /** The endpoint closed: what was not delivered goes back, the subscriber completes. */
    void complete() {
        cancelled();
        sink.complete();
    }

    /** The group could not be joined: the subscriber fails. */
    void error(Throwable error) {
        cancelled();
        sink.error(error);
    }

    /** The subscriber left: what it did not take goes back. */
    void cancelled() {
        done = true;
        EngineDatagram d;
        while ((d = queue.poll()) != null) {
            d.release();
        }
    }
}
