package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The rdma_cm "network" of a stack: bound ports, listeners, live ids, and event delivery (with the delays and
 * drops fault injection asks for). Guarded by the stack's fabric lock except {@link #deliver}.
 */
final class LoopbackCm {
    /** Private data the CM carries: REQ (after the rdma_cm header of RDMA_PS_TCP), REP, REJ. */
    static final int CONNECT_PRIVATE_DATA = 56;
    static final int ACCEPT_PRIVATE_DATA = 196;
    static final int REJECT_PRIVATE_DATA = 148;
    /** IB CM reject reasons as rdma_cm reports them in REJECTED's status. */
    static final int REJ_INVALID_SERVICE_ID = 8;
    static final int REJ_CONSUMER_DEFINED = 28;

    private final LoopbackStack stack;
    private final Map<Integer, List<LoopbackCmId>> bound = new HashMap<>();
    final Set<LoopbackCmId> ids = ConcurrentHashMap.newKeySet();
    private int nextListenPort = 20000;
    private int nextClientPort = 40000;

    LoopbackCm(LoopbackStack stack) {
        this.stack = stack;
    }

    static byte[] pad(byte[] data, int size) {
        byte[] b = new byte[size];
        if (data != null) {
            System.arraycopy(data, 0, b, 0, data.length);
        }
        return b;
    }

    /** Binds {@code id} to {@code address} (port 0: a free one). Fabric lock held. */
    InetSocketAddress bind(LoopbackCmId id, InetAddress ip, int port, boolean client) {
        if (port == 0) {
            do {
                port = client ? nextClientPort++ : nextListenPort++;
            } while (conflict(ip, port));
        } else if (conflict(ip, port)) {
            throw Errnos.fail("rdma_bind_addr", Errnos.EADDRINUSE, ip.getHostAddress() + ":" + port + " is taken");
        }
        bound.computeIfAbsent(port, k -> new ArrayList<>()).add(id);
        return new InetSocketAddress(ip, port);
    }

    private boolean conflict(InetAddress ip, int port) {
        List<LoopbackCmId> list = bound.get(port);
        if (list == null) {
            return false;
        }
        for (LoopbackCmId o : list) {
            InetAddress a = o.local.getAddress();
            if (a.isAnyLocalAddress() || ip.isAnyLocalAddress() || a.equals(ip)) {
                return true;
            }
        }
        return false;
    }

    /** Fabric lock held. */
    void unbind(LoopbackCmId id) {
        if (id.local == null || id.listenerParent != null) {
            return;
        }
        List<LoopbackCmId> list = bound.get(id.local.getPort());
        if (list != null) {
            list.remove(id);
            if (list.isEmpty()) {
                bound.remove(id.local.getPort());
            }
        }
    }

    /** The id listening on {@code destination}, or null. Fabric lock held. */
    LoopbackCmId listener(InetSocketAddress destination, boolean udp) {
        List<LoopbackCmId> list = bound.get(destination.getPort());
        if (list == null) {
            return null;
        }
        for (LoopbackCmId o : list) {
            InetAddress a = o.local.getAddress();
            if (o.state == LoopbackCmId.State.LISTENING && !o.closed && o.udp == udp
                    && (a.isAnyLocalAddress() || a.equals(destination.getAddress()))) {
                return o;
            }
        }
        return null;
    }

    /**
     * Queues an event on {@code target}'s channel, unless the id is closed or its host is dead; after the
     * delay fault injection asks for this event type, if any.
     */
    void deliver(LoopbackCmId target, CmEventType type, int status, LoopbackCmId listenId, byte[] privateData) {
        deliver(target, type, status, listenId, privateData, null);
    }

    /** {@link #deliver} of an event that carries a datagram destination (UDP ESTABLISHED, MULTICAST_JOIN). */
    void deliver(LoopbackCmId target, CmEventType type, int status, LoopbackCmId listenId, byte[] privateData,
            io.reactiverdma.reactive.impl.verbs.DatagramRoute route) {
        if (target.dead) {
            return;
        }
        CmEventInfo e = new CmEventInfo(type, status, target, listenId, privateData == null ? new byte[0] : privateData,
                route);
        long delay = stack.faults.takeEventDelay(type);
        if (delay > 0) {
            stack.schedule(() -> enqueue(target, e), delay);
        } else {
            enqueue(target, e);
        }
    }

    private static void enqueue(LoopbackCmId target, CmEventInfo e) {
        if (!target.closed && !target.dead) {
            target.channel.enqueue(e);
        }
    }

    /**
     * Both connected: their QPs go to RTS, each with its own side's retry count and the peer's RNR retry
     * count, as rdma_cm does it (IB CM: the rnr_retry_count each side gives in its REQ or REP governs the other
     * side's sends; rdma_connect(3): "a send operation from the remote peer"). Fabric lock held.
     */
    void link(LoopbackCmId a, LoopbackCmId b) {
        if (a.qp == null || b.qp == null) {
            return;
        }
        a.qp.connectTo(b.qp, retry(a), rnrRetry(b));
        b.qp.connectTo(a.qp, retry(b), rnrRetry(a));
    }

    private static int retry(LoopbackCmId id) {
        return id.spec == null ? 7 : id.spec.retryCount();
    }

    private static int rnrRetry(LoopbackCmId id) {
        return id.spec == null ? 7 : id.spec.rnrRetryCount();
    }

    /**
     * Ends {@code a}'s connection: its QP and the peer's go to ERR, the peer gets DISCONNECTED (and {@code a}
     * too when {@code notifySelf}). A dead side neither tells nor is told. Fabric lock held.
     */
    void disconnect(LoopbackCmId a, boolean notifySelf) {
        a.state = LoopbackCmId.State.DISCONNECTED;
        if (a.qp != null) {
            a.qp.enterError();
        }
        if (notifySelf) {
            deliver(a, CmEventType.DISCONNECTED, 0, null, null);
        }
        LoopbackCmId p = a.peer;
        if (a.dead || p == null || p.dead || p.closed || p.state != LoopbackCmId.State.CONNECTED) {
            return;
        }
        p.state = LoopbackCmId.State.DISCONNECTED;
        if (p.qp != null) {
            p.qp.enterError();
        }
        deliver(p, CmEventType.DISCONNECTED, 0, null, null);
    }
}
