package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;

import io.reactiverdma.reactive.ConnectionEvent;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;

/**
 * One connection's events, in order: every event is emitted on the connection's poller thread (a hand-over
 * from the rdma_cm thread, inline on the poller), replayed to each subscriber of {@link #flux()}, and
 * forwarded to a listener (a server forwards them to its own {@code connectionEvents()}).
 */
final class ConnectionEvents {
    private final CompletionPoller poller;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private volatile EngineConnection.ConnectionEventListener listener;

    ConnectionEvents(CompletionPoller poller) {
        this.poller = poller;
    }

    void listener(EngineConnection.ConnectionEventListener l) {
        this.listener = l;
    }

    /** Any thread: records {@code e} on the poller thread; {@code forward}: also to the listener. */
    void emit(ConnectionEvent e, boolean forward) {
        poller.run(() -> emitNow(e, forward));
    }

    /** Poller thread. */
    void emitNow(ConnectionEvent e, boolean forward) {
        assert OwnerThread.check(poller);
        events.tryEmitNext(e);
        EngineConnection.ConnectionEventListener l = listener;
        if (forward && l != null) {
            l.onEvent(e);
        }
    }

    /** Poller thread: the last event was emitted. */
    void complete() {
        assert OwnerThread.check(poller);
        events.tryEmitComplete();
    }

    Flux<ConnectionEvent> flux() {
        return events.asFlux();
    }
}
