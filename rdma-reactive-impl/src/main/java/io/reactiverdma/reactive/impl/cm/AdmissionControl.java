package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;

import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectRequest;
import io.reactiverdma.reactive.ConnectionAcceptor;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServerConfig;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * A server's admission of connection requests, with nothing allocated for a request until it is admitted:
 * its private data checked (the peer is untrusted), the connection limit, then the application's acceptor,
 * asynchronously and bounded by {@code ACCEPT_TIMEOUT}. A request refused anywhere is rejected with a
 * {@link RejectData reason the client reads}, and its id destroyed. Every method runs on the rdma_cm thread.
 */
final class AdmissionControl {
    private static final byte[] NO_DATA = new byte[0];

    /** What an admitted request becomes: the server sets its connection up (rdma_cm thread). */
    interface Admitted {
        void setUp(CmEventInfo request, Negotiation offered, byte[] clientData, InetSocketAddress peer,
                byte[] acceptData);
    }

    private final String server;
    private final RdmaServerConfig config;
    private final CmEventLoop cm;
    private final IntSupplier openConnections;
    private final Admitted admitted;
    private final Consumer<ConnectionEvent> publish;
    /** Requests waiting for the acceptor. */
    private final Set<PendingAdmission> admitting = new HashSet<>();
    /** No request is admitted any more. */
    private boolean stopped;

    AdmissionControl(String server, RdmaServerConfig config, CmEventLoop cm, IntSupplier openConnections,
            Admitted admitted, Consumer<ConnectionEvent> publish) {
        this.server = server;
        this.config = config;
        this.cm = cm;
        this.openConnections = openConnections;
        this.admitted = admitted;
        this.publish = publish;
    }

    /** A CONNECT_REQUEST: rejected, admitted at once, or handed to the acceptor. */
    void request(CmEventInfo e) {
        CmId child = e.id();
        InetSocketAddress peer = safePeer(child);
        publish.accept(new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, e.status(), e.privateDataTrimmed(),
                peer));
        if (stopped) {
            reject(child, peer, Rejection.SHUTTING_DOWN, "the server is shutting down");
            return;
        }
        Negotiation offered = Negotiation.decode(e.privateData());
        byte[] clientData = offered != null ? Negotiation.applicationData(e.privateData()) : e.privateDataTrimmed();
        if (clientData == null) {
            // Checked before anything is allocated: the peer is untrusted.
            EngineLog.warn(server + ": the connect request of " + peer + " has malformed private "
                    + "data (its length byte claims more than the " + e.privateData().length
                    + " bytes that arrived); rejected");
            reject(child, peer, Rejection.INVALID_REQUEST, "malformed private data: the length byte claims more "
                    + "than arrived");
            return;
        }
        int max = config.option(RdmaOption.MAX_CONNECTIONS);
        if (openConnections.getAsInt() + admitting.size() >= max) {
            EngineLog.debug(server + ": " + peer + " rejected: " + max + " connections already");
            reject(child, peer, Rejection.CONNECTION_LIMIT, "the server has its maximum of " + max
                    + (max == 1 ? " connection" : " connections"));
            return;
        }
        ConnectionAcceptor acceptor = config.acceptor();
        if (acceptor == null) {
            admitted.setUp(e, offered, clientData, peer, NO_DATA);
            return;
        }
        PendingAdmission pending = new PendingAdmission(e, new ConnectRequest(peer, safeLocal(child), clientData),
                offered);
        admitting.add(pending);
        pending.decision(Mono.defer(() -> Objects.requireNonNull(acceptor.admit(pending.request),
                        "the acceptor returned null instead of a Mono"))
                .timeout(config.option(RdmaOption.ACCEPT_TIMEOUT))
                .subscribe(a -> cm.execute(() -> decided(pending, a)),
                        err -> cm.execute(() -> decisionFailed(pending, err)),
                        () -> cm.execute(() -> decisionFailed(pending, null))));
    }

    /** The acceptor answered. */
    private void decided(PendingAdmission p, Admission a) {
        if (!p.settle()) {
            return;
        }
        admitting.remove(p);
        CmId child = p.event.id();
        InetSocketAddress peer = p.request.remoteAddress();
        if (stopped) {
            reject(child, peer, Rejection.SHUTTING_DOWN, "the server is shutting down");
        } else if (!a.isAccepted()) {
            reject(child, peer, Rejection.REFUSED, a.reason());
        } else {
            admitted.setUp(p.event, p.offered, p.request.privateData(), peer, a.privateData());
        }
    }

    /** The acceptor failed, completed empty ({@code error} null) or timed out. */
    private void decisionFailed(PendingAdmission p, Throwable error) {
        if (!p.settle()) {
            return;
        }
        admitting.remove(p);
        InetSocketAddress peer = p.request.remoteAddress();
        if (error instanceof TimeoutException) {
            EngineLog.warn(server + ": the acceptor did not answer " + peer + " within "
                    + config.option(RdmaOption.ACCEPT_TIMEOUT) + "; rejected");
            reject(p.event.id(), peer, Rejection.ACCEPT_TIMEOUT, "the server did not decide within "
                    + config.option(RdmaOption.ACCEPT_TIMEOUT));
        } else if (error == null) {
            EngineLog.warn(server + ": the acceptor completed without a decision for " + peer + "; rejected");
            reject(p.event.id(), peer, Rejection.SERVER_ERROR, "the server made no decision");
        } else {
            EngineLog.error(server + ": the acceptor failed for " + peer + "; rejected", error);
            reject(p.event.id(), peer, Rejection.SERVER_ERROR, "the server's acceptor failed");
        }
    }

    /** No more requests: those waiting for the acceptor are rejected, later ones too. */
    void stop() {
        stopped = true;
        for (PendingAdmission p : new ArrayList<>(admitting)) {
            if (p.settle()) {
                reject(p.event.id(), p.request.remoteAddress(), Rejection.SHUTTING_DOWN, "the server is shutting down");
            }
        }
        admitting.clear();
    }

    /** Rejects a request nothing was allocated for, telling the peer why, and destroys its id. */
    void reject(CmId child, InetSocketAddress peer, Rejection why, String reason) {
        byte[] data = RejectData.encode(why, reason);
        try {
            child.reject(data);
        } catch (RuntimeException ignored) {
            // the peer gave up already, or sees a timeout instead
        } finally {
            child.close();
        }
        publish.accept(new ConnectionEvent(ConnectionEvent.Type.REJECTED, 0, data, peer));
    }

    private static InetSocketAddress safeLocal(CmId id) {
        try {
            return id.localAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static InetSocketAddress safePeer(CmId id) {
        try {
            return id.peerAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }
}
