package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A server's engine and a client's engine on one loopback stack, each with its own completion queues and
 * pollers as two hosts would have, for the engine's loopback-only tests: a server whose handler hands each
 * connection to {@link #serverSide(int)} and keeps it open until the client closes, clients connected to it,
 * and {@link #close()} (in the test's tear-down) closing the clients, the server, then the stack.
 */
final class LoopbackClientServer implements AutoCloseable {
    /** How long one step may take. */
    static final Duration WAIT = Duration.ofSeconds(10);

    final LoopbackStack stack = LoopbackStack.create();
    final RdmaEngine serverEngine = new RdmaEngine(stack);
    final RdmaEngine clientEngine = new RdmaEngine(stack);
    private final List<Disposable> toClose = new CopyOnWriteArrayList<>();
    private final Sinks.Many<RdmaConnection> accepted = Sinks.many().replay().all();
    private volatile DisposableRdmaServer server;

    /** A configuration on the loopback's 127.0.0.1, any free port. */
    static RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
    }

    /** Binds the server with {@code config}, replacing (not closing) one bound before. */
    DisposableRdmaServer bind(RdmaTransportConfig config) {
        DisposableRdmaServer s = serverEngine.bind(config, c -> {
            accepted.tryEmitNext(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(s);
        server = s;
        return s;
    }

    /** The server bound last, or null when none is. */
    DisposableRdmaServer server() {
        return server;
    }

    /** A client connected with {@code config} to the server's port (bound with {@link #config()} if none is). */
    RdmaConnection connect(RdmaTransportConfig config) {
        DisposableRdmaServer s = server != null ? server : bind(config());
        RdmaConnection c = clientEngine.connect(config.withPort(s.port())).block(WAIT);
        assertNotNull(c);
        toClose.add(c);
        return c;
    }

    /** The server's side of the {@code index}th connection it accepted (0 the first). */
    RdmaConnection serverSide(int index) {
        RdmaConnection s = accepted.asFlux().elementAt(index).block(WAIT);
        assertNotNull(s);
        return s;
    }

    /** The client's active cm id with a queue pair (not a listener, not a connect request's id). */
    LoopbackCmId clientId() {
        for (LoopbackCmId id : stack.liveIds()) {
            if (!id.isConnectRequest() && id.queuePair() != null) {
                return id;
            }
        }
        throw new AssertionError("no client id with a queue pair among " + stack.liveIds());
    }

    /** Closes {@code d} in {@link #close()}, before the server. */
    void closeOnTearDown(Disposable d) {
        toClose.add(d);
    }

    @Override
    public void close() {
        try {
            toClose.forEach(Disposable::dispose);
            DisposableRdmaServer s = server;
            if (s != null) {
                s.disposeNow(WAIT);
            }
        } finally {
            stack.close();
        }
    }
}
