package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.publisher.FluxSink;

import java.util.ArrayDeque;

/**
 * The subscriber side of {@code receive()} or of one {@code join(group)}: datagrams routed to it wait here,
 * each holding its receive buffer, until the subscriber asks for them. Poller thread only.
 */
final class DatagramStream {
    private final ArrayDeque<EngineDatagram> queue = new ArrayDeque<>();
    private final FluxSink<RdmaDatagramMessage> sink;
    private boolean done;

    DatagramStream(FluxSink<RdmaDatagramMessage> sink) {
        this.sink = sink;
    }

    void offer(EngineDatagram d) {
        queue.add(d);
        drain();
    }

    /** Emits what is queued, as far as the subscriber's demand goes. */
    void drain() {
        while (!done && !queue.isEmpty() && sink.requestedFromDownstream() > 0) {
            sink.next(queue.poll());
        }
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
