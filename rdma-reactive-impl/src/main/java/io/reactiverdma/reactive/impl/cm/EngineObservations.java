package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaConnectionObserver;
import io.reactiverdma.reactive.RdmaConnectionObserver.Attempt;
import io.reactiverdma.reactive.RdmaConnectionObserver.Side;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.RdmaServerConfig;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Tells a config's {@link RdmaConnectionObserver} about connects and accepts, from outside the engine's
 * connection and server classes: a client's connect is the {@code Mono} it returns, a server's accepts are
 * read from its connection events. Nothing here runs when no observer is configured.
 */
public final class EngineObservations {
    private EngineObservations() {
    }

    /** {@code connect} observed: started per subscription (with its context), ended exactly once. */
    public static Mono<RdmaConnection> connect(RdmaClientConfig config, Mono<RdmaConnection> connect) {
        RdmaConnectionObserver observer = config.observer();
        if (observer == null) {
            return connect;
        }
        return Mono.deferContextual(context -> {
            // Unresolved: resolving a name here would block the subscriber; the engine resolves it later.
            Attempt attempt = observer.start(Side.CLIENT,
                    InetSocketAddress.createUnresolved(config.host(), config.port()), context);
            AtomicBoolean ended = new AtomicBoolean();
            return connect
                    .doOnSuccess(c -> {
                        if (ended.compareAndSet(false, true)) {
                            attempt.established();
                        }
                    })
                    .doOnError(e -> {
                        if (ended.compareAndSet(false, true)) {
                            attempt.failed(e);
                        }
                    })
                    .doOnCancel(() -> {
                        if (ended.compareAndSet(false, true)) {
                            attempt.cancelled();
                        }
                    });
        });
    }

    /**
     * Observes each connection request {@code server} gets, by the peer's address: CONNECT_REQUEST starts,
     * ESTABLISHED ends it well, any other event of that peer first (REJECTED, DISCONNECTED, CLOSED ...) ends it
     * as failed. Attempts still open when the server is disposed end as cancelled (among them requests the
     * server rejected before creating a connection, which send no later event).
     */
    public static DisposableRdmaServer watch(RdmaServerConfig config, DisposableRdmaServer server) {
        RdmaConnectionObserver observer = config.observer();
        if (observer == null) {
            return server;
        }
        Map<InetSocketAddress, Attempt> pending = new ConcurrentHashMap<>();
        server.connectionEvents().subscribe(e -> onEvent(observer, pending, e), err -> endAll(pending),
                () -> endAll(pending));
        return server;
    }

    private static void onEvent(RdmaConnectionObserver observer, Map<InetSocketAddress, Attempt> pending,
            ConnectionEvent e) {
        InetSocketAddress peer = e.peerAddress();
        if (peer == null) {
            return; // the listener's own events (DEVICE_REMOVAL ...): no attempt to end
        }
        if (e.type() == ConnectionEvent.Type.CONNECT_REQUEST) {
            Attempt previous = pending.put(peer, observer.start(Side.SERVER, peer, Context.empty()));
            if (previous != null) {
                previous.cancelled(); // its connection never reported back; a new request replaces it
            }
            return;
        }
        Attempt attempt = pending.remove(peer);
        if (attempt == null) {
            return; // an event of a connection established earlier
        }
        if (e.type() == ConnectionEvent.Type.ESTABLISHED) {
            attempt.established();
        } else {
            attempt.failed(new RdmaConnectException("the connection request from " + peer + " ended with "
                    + e.type() + " (status " + e.status() + ") before it was established", e.type(), e.status(),
                    e.privateData()));
        }
    }

    private static void endAll(Map<InetSocketAddress, Attempt> pending) {
        pending.values().forEach(Attempt::cancelled);
        pending.clear();
    }
}
