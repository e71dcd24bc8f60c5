package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;

import io.reactiverdma.reactive.ConnectionEvent;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;

/**
 * One connection's events, in order, and its end: every event is emitted on the connection's poller thread (a
 * hand-over from the rdma_cm thread, inline on the poller), replayed to each subscriber of {@link #flux()},
 * and forwarded to a listener (a server forwards them to its own {@code connectionEvents()}); CLOSED is the
 * last, after which the events complete and then {@link #onDispose()}.
 */
final class ConnectionEvents {
    private final CompletionPoller poller;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
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

    /** Any thread: CLOSED on the poller thread, behind every event still queued there; then the end. */
    void announceClosed(InetSocketAddress remote) {
        poller.run(() -> {
            emitNow(new ConnectionEvent(ConnectionEvent.Type.CLOSED, 0, null, remote), true);
            events.tryEmitComplete();
            disposed.tryEmitEmpty();
        });
    }

    /** Completes after CLOSED was emitted and the events completed. */
    Mono<Void> onDispose() {
        return disposed.asMono();
    }

    Flux<ConnectionEvent> flux() {
        return events.asFlux();
    }
}
