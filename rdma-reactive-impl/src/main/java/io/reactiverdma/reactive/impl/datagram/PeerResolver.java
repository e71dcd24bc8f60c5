package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import reactor.core.publisher.MonoSink;

import java.net.InetSocketAddress;

/**
 * Resolves one unicast peer on the rdma_cm thread the way rdma-core's {@code udaddy} does: an id on the UDP
 * port space resolves the address and the route, then {@code rdma_connect} sends a SIDR request whose reply
 * (ESTABLISHED) carries the peer's QP number, its Q_Key and the address handle attributes. The id is
 * destroyed once the answer is in: the address handle made from it outlives it.
 */
final class PeerResolver implements CmEventLoop.Handler {
    private final PeerDirectory endpoint;
    private final CmEventLoop cm;
    private final InetSocketAddress peer;
    private final int timeoutMs;
    private final MonoSink<Destination> sink;
    private CmId id;
    private boolean done;

    PeerResolver(PeerDirectory endpoint, CmEventLoop cm, InetSocketAddress peer, int timeoutMs,
            MonoSink<Destination> sink) {
        this.endpoint = endpoint;
        this.cm = cm;
        this.peer = peer;
        this.timeoutMs = timeoutMs;
        this.sink = sink;
    }

    /** rdma_cm thread. */
    void start() {
        try {
            id = cm.channel().createId(PortSpace.UDP);
            cm.register(id, this);
            id.resolveAddress(new InetSocketAddress(endpoint.localAddress().getAddress(), 0), peer, timeoutMs);
        } catch (RuntimeException e) {
            fail(ConnectionEvent.Type.ADDRESS_ERROR, 0, "resolving " + peer + " failed: " + e.getMessage());
        }
    }

    @Override
    public void onEvent(CmEventInfo e) {
        try {
            switch (e.type()) {
                case ADDR_RESOLVED -> id.resolveRoute(timeoutMs);
                case ROUTE_RESOLVED -> id.connect(new ConnectSpec(0, 0, 0, 0, null));
                case ESTABLISHED -> established(e.datagram());
                case ADDR_ERROR -> fail(ConnectionEvent.Type.ADDRESS_ERROR, e.status(), "no route to address " + peer);
                case ROUTE_ERROR -> fail(ConnectionEvent.Type.ROUTE_ERROR, e.status(), "no route to " + peer);
                case UNREACHABLE -> fail(ConnectionEvent.Type.UNREACHABLE, e.status(),
                        "no datagram endpoint answered at " + peer + " (SIDR request timed out)");
                case REJECTED -> fail(ConnectionEvent.Type.REJECTED, e.status(),
                        "no datagram endpoint listens at " + peer + " (reject reason " + e.status() + ")");
                case CONNECT_ERROR -> fail(ConnectionEvent.Type.CONNECT_ERROR, e.status(), "resolving " + peer + " failed");
                default -> { }
            }
        } catch (RuntimeException ex) {
            fail(ConnectionEvent.Type.CONNECT_ERROR, 0, "resolving " + peer + " failed: " + ex.getMessage());
        }
    }

    private void established(DatagramRoute route) {
        if (route == null) {
            fail(ConnectionEvent.Type.CONNECT_ERROR, 0, "the SIDR reply of " + peer + " carried no UD parameters");
            return;
        }
        Destination d = endpoint.destinationFor(peer, id, route);
        if (d == null) { // the endpoint closed meanwhile: its sends fail as closed
            if (finish()) {
                sink.error(EngineDatagramEndpoint.closedError());
            }
            return;
        }
        finish();
        sink.success(d);
    }

    private void fail(ConnectionEvent.Type type, int status, String message) {
        if (finish()) {
            sink.error(new RdmaConnectException(message, type, status, new byte[0]));
        }
    }

    private boolean finish() {
        if (done) {
            return false;
        }
        done = true;
        if (id != null) {
            cm.unregister(id);
            id.close();
        }
        return true;
    }
}
