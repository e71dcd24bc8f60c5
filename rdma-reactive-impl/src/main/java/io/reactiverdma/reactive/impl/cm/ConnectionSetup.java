package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.ConnectionHandle;
import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.connection.SharedReceives;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;

import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.util.function.Consumer;
import java.util.function.Function;

import static io.reactiverdma.natives.Errno.EINVAL;

/**
 * A server's set-up of an admitted request: the connection is created (its QP on the request's id, on the
 * server's shared receive queue of that device if it has one), the handler is called (so it can ask for
 * receives before the peer may send), and the request is accepted once those receives are posted. A
 * connection that closes before its accept rejects its peer. rdma_cm thread, except where a lambda hands
 * work to the connection's poller.
 */
final class ConnectionSetup {
    /** Rejects a request nothing was allocated for (see {@link AdmissionControl#reject}). */
    interface Rejecter {
        void reject(CmId child, InetSocketAddress peer, Rejection why, String reason);
    }

    private final String server;
    private final EngineContext engine;
    private final CmEventLoop cm;
    private final RdmaTransportConfig config;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;
    private final Function<DeviceResources, SharedReceives> sharedReceives;
    private final Consumer<ConnectionEvent> publish;
    private final Consumer<EngineConnection> opened;
    private final Rejecter rejecter;

    /**
     * {@code sharedReceives}: the server's SRQ on a device, or null; {@code publish}: the server's events;
     * {@code opened}: the server tracks a connection just created (until its onDispose completes).
     */
    ConnectionSetup(String server, EngineContext engine, CmEventLoop cm, RdmaTransportConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler,
            Function<DeviceResources, SharedReceives> sharedReceives, Consumer<ConnectionEvent> publish,
            Consumer<EngineConnection> opened, Rejecter rejecter) {
        this.server = server;
        this.engine = engine;
        this.cm = cm;
        this.config = config;
        this.handler = handler;
        this.sharedReceives = sharedReceives;
        this.publish = publish;
        this.opened = opened;
        this.rejecter = rejecter;
    }

    /** Creates the connection of an admitted request, calls the handler, and accepts once its receives are posted. */
    void setUp(CmEventInfo e, Negotiation offered, byte[] clientData, InetSocketAddress peer, byte[] acceptData) {
        CmId child = e.id();
        EngineConnection c;
        try {
            DeviceResources device = engine.device(child);
            c = new EngineConnection(cm, child, device, config, true, sharedReceives.apply(device));
        } catch (RuntimeException ex) {
            EngineLog.error(server + ": cannot set up a connection for " + peer + "; rejecting", ex);
            rejecter.reject(child, peer, Rejection.SERVER_ERROR, "the server cannot set up a connection: "
                    + ex.getMessage());
            return;
        }
        c.agreement().applyPeerOffer(offered);
        c.agreement().peerPrivateData(clientData);
        // The server published this request already: the connection records it without forwarding it again.
        c.emit(new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, e.status(), e.privateDataTrimmed(), peer),
                false);
        c.setEventListener(publish::accept);
        engine.track(c);
        opened.accept(c);
        cm.register(child, c::onCmEvent);
        c.unaccepted().arm(RejectData.encode(Rejection.SERVER_ERROR,
                "the server closed the connection before accepting it"));
        try {
            Publisher<Void> p = handler.apply(new ConnectionHandle(c, false));
            Mono.from(p).subscribe(null, err -> handlerFailed(c, err), c::dispose);
        } catch (RuntimeException ex) {
            EngineLog.error(server + ": the handler threw for " + c + "; rejecting", ex);
            // the close rejects the peer (rather than letting it wait for its connect timeout)
            c.unaccepted().arm(RejectData.encode(Rejection.SERVER_ERROR, "the server's handler failed"));
            c.dispose();
            return;
        }
        // Accept once the tasks the handler handed to the connection's poller (receive() and its first
        // request, so receives are posted) have run: the peer may send as soon as it is accepted.
        // On a shared receive queue also once an SRQ receive is kept for the client's hello (see
        // CreditWordHandshake): a refill may have to provide it; ACCEPT_TIMEOUT bounds the wait.
        c.poller.execute(() -> c.agreement().whenPeerHelloCanArrive(
                () -> cm.execute(() -> accept(c, child, offered, peer, acceptData)),
                config.option(RdmaOption.ACCEPT_TIMEOUT)));
    }

    /** The handler's publisher failed: the connection closes; logged as a failure unless it only closed. */
    private void handlerFailed(EngineConnection c, Throwable err) {
        if (c.closedInOrder(err)) {
            // The handler's send or receive ended because its connection closed without a failure (the peer
            // disconnected, or this side disposed it): how a handler normally ends.
            EngineLog.debug(server + ": the handler of " + c + " ended with its connection: " + err.getMessage());
        } else {
            EngineLog.error(server + ": the handler of " + c + " failed", err);
        }
        c.dispose();
    }

    /** rdma_cm thread: the accept, unless the connection closed meanwhile (then the peer is rejected). */
    private void accept(EngineConnection c, CmId child, Negotiation offered, InetSocketAddress peer, byte[] acceptData) {
        if (c.isDisposed()) {
            // closed already (by the handler, or a hello that found no receive in time): the peer hears why
            // now, unless the close's disconnect told it first; the close destroys the id after that
            c.unaccepted().rejectNow();
            return;
        }
        c.unaccepted().accepting();
        try {
            // Framework peers get this side's answer and the acceptor's data; plain peers (no offer) only the
            // acceptor's data, as it is (none: no private data).
            byte[] reply = offered != null ? c.agreement().offer().encode(acceptData)
                    : acceptData.length > 0 ? acceptData : null;
            ConnectParams.applyAckTimeout(config, child);
            child.accept(ConnectParams.connParam(config, engine.device(child), reply));
            c.agreement().applyMinRnrTimer(); // the QP is in RTS now
        } catch (NativeCallException ex) {
            if (ex.errno() == EINVAL) {
                // What a peer that already gave up (its connect timed out, its id is gone) leaves behind: seen
                // under emulation when a cold client JVM's first connect outlasts its timeout. Not a server fault.
                EngineLog.warn(server + ": " + peer + " gave up before its connection was accepted ("
                        + ex.getMessage() + "); dropped");
            } else {
                EngineLog.error(server + ": rdma_accept failed for " + c, ex);
            }
            c.dispose();
        } catch (RuntimeException ex) {
            EngineLog.error(server + ": rdma_accept failed for " + c, ex);
            c.dispose();
        }
    }
}
