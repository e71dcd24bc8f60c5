package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * An rdma_cm id (RDMA_PS_TCP, or RDMA_PS_UDP: SIDR, UD QPs, multicast joins). Every call checks the state like librdmacm and the kernel do and throws a
 * {@link io.reactiverdma.natives.NativeCallException} naming the call (errno EINVAL for a wrong state,
 * EBADF after close). Events go to the channel it was made on (a connect request's id: the listener's).
 */
public final class LoopbackCmId implements CmId {
    /** The states the loopback distinguishes. */
    public enum State { IDLE, BOUND, LISTENING, ADDR_RESOLVED, ROUTE_RESOLVED, CONNECTING, REQUEST, CONNECTED,
        DISCONNECTED, FAILED }

    private final LoopbackStack stack;
    final LoopbackCmChannel channel;
    /** For a connect request's id: the listener it came to. */
    final LoopbackCmId listenerParent;
    private final long key;
    // ---- fabric lock
    State state = State.IDLE;
    volatile boolean closed;
    volatile boolean dead;
    /** rdma_disconnect calls on this id, refused ones too (under the fabric lock). */
    private int disconnectCalls;

    /** How often rdma_disconnect was called on this id (an engine calls it once per close). */
    public int disconnectCalls() {
        synchronized (stack.lock) {
            return disconnectCalls;
        }
    }
    volatile InetSocketAddress local;
    volatile InetSocketAddress remote;
    LoopbackDevice device;
    LoopbackQueuePair qp;
    ConnectSpec spec;
    LoopbackCmId peer;
    /** rdma_set_option values: -1 while unset (what rdma_cm's defaults would be). */
    volatile int typeOfService = -1;
    volatile int ackTimeout = -1;
    /** RDMA_PS_UDP: SIDR instead of connections, UD QPs, multicast. */
    final boolean udp;
    /** The multicast groups joined through this id (fabric lock). */
    private final java.util.Set<InetAddress> joined = new java.util.HashSet<>();

    LoopbackCmId(LoopbackStack stack, LoopbackCmChannel channel, LoopbackCmId listenerParent) {
        this(stack, channel, listenerParent, false);
    }

    LoopbackCmId(LoopbackStack stack, LoopbackCmChannel channel, LoopbackCmId listenerParent, boolean udp) {
        this.udp = udp;
        this.stack = stack;
        this.channel = channel;
        this.listenerParent = listenerParent;
        this.key = stack.nextKey();
        stack.cm.ids.add(this);
        stack.resources.add(LoopbackResources.Kind.CM_ID, this, description());
    }

    @Override
    public long key() {
        return key;
    }

    @Override
    public String description() {
        return (listenerParent != null ? "request-id#" : "cm-id#") + key;
    }

    private void open(String call) {
        if (closed) {
            throw Errnos.fail(call, Errnos.EBADF, description() + " was destroyed");
        }
    }

    private RuntimeException state(String call) {
        return Errnos.fail(call, Errnos.EINVAL, description() + " is " + state);
    }

    public State state() {
        synchronized (stack.lock) {
            return state;
        }
    }

    @Override
    public void bind(InetSocketAddress address) {
        synchronized (stack.lock) {
            open("rdma_bind_addr");
            if (state != State.IDLE) {
                throw state("rdma_bind_addr");
            }
            InetAddress ip = address.getAddress();
            if (!ip.isAnyLocalAddress() && !stack.isKnown(ip)) {
                throw Errnos.fail("rdma_bind_addr", Errnos.EADDRNOTAVAIL, ip.getHostAddress()
                        + " is on no loopback device");
            }
            local = stack.cm.bind(this, ip, address.getPort(), false);
            device = ip.isAnyLocalAddress() ? null : stack.deviceOf(ip);
            state = State.BOUND;
        }
    }

    @Override
    public void listen(int backlog) {
        synchronized (stack.lock) {
            open("rdma_listen");
            if (state != State.BOUND) {
                throw state("rdma_listen");
            }
            state = State.LISTENING;
        }
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMs) {
        synchronized (stack.lock) {
            open("rdma_resolve_addr");
            if (state != State.IDLE && state != State.BOUND) {
                throw state("rdma_resolve_addr");
            }
            if (source != null && !source.getAddress().isAnyLocalAddress() && !stack.isKnown(source.getAddress())) {
                throw Errnos.fail("rdma_resolve_addr", Errnos.EADDRNOTAVAIL, source + " is on no loopback device");
            }
            LoopbackFaults.ConnectFailure f = stack.faults.takeConnectFailure(CmEventType.ADDR_ERROR);
            if (f != null || !stack.isKnown(destination.getAddress())) {
                stack.cm.deliver(this, CmEventType.ADDR_ERROR, f != null ? f.status() : -Errnos.EADDRNOTAVAIL,
                        null, null);
                return;
            }
            InetAddress ip = source != null && !source.getAddress().isAnyLocalAddress() ? source.getAddress()
                    : state == State.BOUND && !local.getAddress().isAnyLocalAddress() ? local.getAddress()
                    : destination.getAddress();
            if (state == State.IDLE) {
                local = stack.cm.bind(this, ip, source != null ? source.getPort() : 0, true);
            }
            device = stack.deviceOf(ip);
            remote = destination;
            state = State.ADDR_RESOLVED;
            stack.cm.deliver(this, CmEventType.ADDR_RESOLVED, 0, null, null);
        }
    }

    @Override
    public void resolveRoute(int timeoutMs) {
        synchronized (stack.lock) {
            open("rdma_resolve_route");
            if (state != State.ADDR_RESOLVED) {
                throw state("rdma_resolve_route");
            }
            LoopbackFaults.ConnectFailure f = stack.faults.takeConnectFailure(CmEventType.ROUTE_ERROR);
            if (f != null) {
                stack.cm.deliver(this, CmEventType.ROUTE_ERROR, f.status(), null, null);
                return;
            }
            state = State.ROUTE_RESOLVED;
            stack.cm.deliver(this, CmEventType.ROUTE_RESOLVED, 0, null, null);
        }
    }

    @Override
    public Device device() {
        synchronized (stack.lock) {
            if (closed) {
                throw new IllegalStateException("device(): " + description() + " was destroyed");
            }
            if (device == null) {
                throw new IllegalStateException("device(): " + description() + " is bound to no device (" + state
                        + ")");
            }
            return device;
        }
    }

    @Override
    public QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        if (udp) {
            throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, description() + " is on RDMA_PS_UDP: its QPs are UD");
        }
        return createQp(pd, cq, spec);
    }

    @Override
    public QueuePair createDatagramQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        if (!udp) {
            throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, description() + " is on RDMA_PS_TCP: its QPs are RC");
        }
        LoopbackQueuePair q = createQp(pd, cq, spec);
        synchronized (stack.lock) {
            q.ud = true;
            q.state = LoopbackQueuePair.State.RTS; // librdmacm moves a UD QP to RTS with the port space's Q_Key
            stack.datagrams.register(q);
        }
        return q;
    }

    @Override
    public int activeMtu() {
        return stack.datagramMtu;
    }

    @Override
    public void acceptDatagram(int qpNum) {
        synchronized (stack.lock) {
            open("rdma_accept");
            if (state != State.REQUEST || !udp) {
                throw state("rdma_accept");
            }
            LoopbackCmId client = peer;
            state = State.DISCONNECTED; // a SIDR request is answered once; the id only waits to be destroyed
            if (client != null && !client.closed && client.state == State.CONNECTING) {
                client.state = State.CONNECTED;
                stack.cm.deliver(client, CmEventType.ESTABLISHED, 0, null, null,
                        LoopbackDatagrams.route(local.getAddress(), qpNum));
            }
        }
    }

    @Override
    public void joinMulticast(InetSocketAddress group) {
        synchronized (stack.lock) {
            open("rdma_join_multicast");
            if (!udp || device == null || (state != State.BOUND && state != State.ADDR_RESOLVED)) {
                throw state("rdma_join_multicast"); // the kernel refuses joins on listening or unbound ids
            }
            if (!group.getAddress().isMulticastAddress() || joined.contains(group.getAddress())) {
                throw Errnos.fail("rdma_join_multicast", Errnos.EINVAL, group + " is not a multicast group or joined");
            }
            int failure = stack.faults.takeJoinFailure();
            if (failure != 0) {
                stack.cm.deliver(this, CmEventType.MULTICAST_ERROR, failure, null, null);
                return;
            }
            joined.add(group.getAddress());
            if (qp != null) {
                stack.datagrams.attach(group.getAddress(), qp);
            }
            stack.cm.deliver(this, CmEventType.MULTICAST_JOIN, 0, null, null,
                    LoopbackDatagrams.route(group.getAddress(), LoopbackDatagrams.MULTICAST_QPN));
        }
    }

    @Override
    public void leaveMulticast(InetSocketAddress group) {
        synchronized (stack.lock) {
            open("rdma_leave_multicast");
            if (!joined.remove(group.getAddress())) {
                throw Errnos.fail("rdma_leave_multicast", Errnos.EADDRNOTAVAIL, group + " was not joined");
            }
            if (qp != null) {
                stack.datagrams.detach(group.getAddress(), qp);
            }
        }
    }

    /** The groups joined through this id. */
    public java.util.Set<InetAddress> joinedGroups() {
        synchronized (stack.lock) {
            return java.util.Set.copyOf(joined);
        }
    }

    @Override
    public io.reactiverdma.reactive.impl.verbs.AddressHandle createAddressHandle(ProtectionDomain pd,
            io.reactiverdma.reactive.impl.verbs.DatagramRoute route) {
        return stack.datagrams.handle(route);
    }

    @Override
    public io.reactiverdma.reactive.impl.verbs.AddressHandle createReplyAddressHandle(ProtectionDomain pd,
            java.nio.ByteBuffer grh, int sourceQpn) {
        return stack.datagrams.replyHandle(grh);
    }

    private LoopbackQueuePair createQp(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        LoopbackQueuePair q;
        synchronized (stack.lock) {
            open("rdma_create_qp");
            if (device == null) {
                throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, description() + " has no device yet (" + state + ")");
            }
            if (qp != null) {
                throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, description() + " has a QP already");
            }
            LoopbackProtectionDomain p = (LoopbackProtectionDomain) pd;
            LoopbackCompletionQueue c = (LoopbackCompletionQueue) cq;
            if (p.device != device || c.device != device || p.isClosed() || c.isClosed()) {
                throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, "the PD and CQ must be live and on " + device);
            }
            LoopbackSharedReceiveQueue srq = (LoopbackSharedReceiveQueue) spec.srq();
            boolean recvOk = srq != null || (spec.maxRecvWr() >= 1 && spec.maxRecvWr() <= LoopbackQueuePair.MAX_WR);
            if (spec.maxSendWr() < 1 || spec.maxSendWr() > LoopbackQueuePair.MAX_WR || !recvOk
                    || spec.maxInlineData() < 0) {
                throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, spec.toString());
            }
            if (srq != null && stack.zeroCost) {
                throw Errnos.fail("rdma_create_qp", Errnos.EOPNOTSUPP,
                        "the zero-cost loopback stack models no shared receive queues");
            }
            if (srq != null && (srq.pd != p || srq.isDestroyed())) {
                throw Errnos.fail("rdma_create_qp", Errnos.EINVAL, "the SRQ must be live and of the QP's PD");
            }
            q = new LoopbackQueuePair(this, p, c, spec.maxSendWr(), spec.maxRecvWr(),
                    Math.min(spec.maxInlineData(), LoopbackQueuePair.MAX_INLINE), srq);
            p.queuePairs.add(q);
            c.queuePairs.add(q);
            qp = q;
            if (state == State.CONNECTED && peer != null) {
                stack.cm.link(this, peer);
            }
        }
        device.resources.add(LoopbackResources.Kind.QUEUE_PAIR, q, q.toString());
        return q;
    }

    @Override
    public void destroyQueuePair() {
        LoopbackQueuePair q;
        synchronized (stack.lock) {
            q = qp;
            qp = null;
        }
        if (q != null) {
            q.destroy();
        }
    }

    /** True for an id made for a connect request (the passive side). */
    /**
     * Bound to an address and nothing more (no QP, not listening, resolving or connecting): what the engine keeps
     * on each device it holds resources on, to hear of the device's removal (its device watch).
     */
    public boolean isBoundOnly() {
        synchronized (stack.lock) {
            return state == State.BOUND && qp == null && !closed;
        }
    }

    public boolean isConnectRequest() {
        return listenerParent != null;
    }

    /** The other end of this id's connection (attempt), or null. */
    public LoopbackCmId peer() {
        synchronized (stack.lock) {
            return peer;
        }
    }

    /** The QP created on this id (null when none or destroyed). */
    public LoopbackQueuePair queuePair() {
        synchronized (stack.lock) {
            return qp;
        }
    }

    @Override
    public void setTypeOfService(int tos) {
        synchronized (stack.lock) {
            open("rdma_set_option");
            if (tos < 0 || tos > 255) {
                throw Errnos.fail("rdma_set_option", Errnos.EINVAL, "RDMA_OPTION_ID_TOS " + tos);
            }
            typeOfService = tos;
        }
    }

    @Override
    public void setAckTimeout(int exponent) {
        synchronized (stack.lock) {
            open("rdma_set_option");
            if (exponent < 1 || exponent > 31) {
                throw Errnos.fail("rdma_set_option", Errnos.EINVAL, "RDMA_OPTION_ID_ACK_TIMEOUT " + exponent);
            }
            ackTimeout = exponent;
        }
    }

    /** The type of service set on this id, -1 when none. */
    public int typeOfService() {
        return typeOfService;
    }

    /** The ACK timeout exponent set on this id, -1 when none. */
    public int ackTimeout() {
        return ackTimeout;
    }

    /** The conn params of this id's connect or accept, null before either. */
    public ConnectSpec connectSpec() {
        synchronized (stack.lock) {
            return spec;
        }
    }

    @Override
    public void connect(ConnectSpec s) {
        synchronized (stack.lock) {
            open("rdma_connect");
            if (state != State.ROUTE_RESOLVED) {
                throw state("rdma_connect");
            }
            if (s.privateData() != null && s.privateData().length > LoopbackCm.CONNECT_PRIVATE_DATA) {
                throw Errnos.fail("rdma_connect", Errnos.EINVAL, s.privateData().length
                        + " bytes of private data (at most " + LoopbackCm.CONNECT_PRIVATE_DATA + ")");
            }
            spec = s;
            LoopbackFaults.ConnectFailure f = stack.faults.takeConnectFailure(CmEventType.CONNECT_REQUEST);
            if (f != null) {
                state = State.FAILED;
                stack.cm.deliver(this, f.type(), f.status(), null, f.type() == CmEventType.REJECTED
                        ? new byte[LoopbackCm.REJECT_PRIVATE_DATA] : null);
                return;
            }
            LoopbackCmId listener = stack.cm.listener(remote, udp);
            if (listener == null) {
                state = State.FAILED;
                stack.cm.deliver(this, CmEventType.REJECTED, LoopbackCm.REJ_INVALID_SERVICE_ID, null,
                        new byte[LoopbackCm.REJECT_PRIVATE_DATA]);
                return;
            }
            LoopbackCmId child = new LoopbackCmId(stack, listener.channel, listener, udp);
            child.device = stack.deviceOf(remote.getAddress());
            child.local = new InetSocketAddress(remote.getAddress(), listener.local.getPort());
            child.remote = local;
            child.state = State.REQUEST;
            child.peer = this;
            peer = child;
            state = State.CONNECTING;
            stack.cm.deliver(child, CmEventType.CONNECT_REQUEST, 0, listener,
                    LoopbackCm.pad(s.privateData(), LoopbackCm.CONNECT_PRIVATE_DATA));
        }
    }

    @Override
    public void accept(ConnectSpec s) {
        synchronized (stack.lock) {
            open("rdma_accept");
            if (state != State.REQUEST) {
                throw state("rdma_accept");
            }
            if (s.privateData() != null && s.privateData().length > LoopbackCm.ACCEPT_PRIVATE_DATA) {
                throw Errnos.fail("rdma_accept", Errnos.EINVAL, s.privateData().length
                        + " bytes of private data (at most " + LoopbackCm.ACCEPT_PRIVATE_DATA + ")");
            }
            LoopbackCmId client = peer;
            if (client == null || client.closed || client.state != State.CONNECTING) {
                throw Errnos.fail("rdma_accept", Errnos.EINVAL, "the peer of " + description() + " gave up");
            }
            spec = s;
            state = State.CONNECTED;
            client.state = State.CONNECTED;
            stack.cm.link(this, client);
            stack.cm.deliver(this, CmEventType.ESTABLISHED, 0, null, null);
            stack.cm.deliver(client, CmEventType.ESTABLISHED, 0, null,
                    LoopbackCm.pad(s.privateData(), LoopbackCm.ACCEPT_PRIVATE_DATA));
        }
    }

    @Override
    public void reject(byte[] privateData) {
        synchronized (stack.lock) {
            open("rdma_reject");
            if (state != State.REQUEST) {
                throw state("rdma_reject");
            }
            if (privateData != null && privateData.length > LoopbackCm.REJECT_PRIVATE_DATA) {
                throw Errnos.fail("rdma_reject", Errnos.EINVAL, privateData.length + " bytes of private data (at most "
                        + LoopbackCm.REJECT_PRIVATE_DATA + ")");
            }
            state = State.FAILED;
            rejectPeer(privateData);
        }
    }

    private void rejectPeer(byte[] privateData) {
        LoopbackCmId client = peer;
        if (client != null && !client.closed && client.state == State.CONNECTING) {
            client.state = State.FAILED;
            stack.cm.deliver(client, CmEventType.REJECTED, LoopbackCm.REJ_CONSUMER_DEFINED, null,
                    LoopbackCm.pad(privateData, LoopbackCm.REJECT_PRIVATE_DATA));
        }
    }

    @Override
    public void disconnect() {
        synchronized (stack.lock) {
            disconnectCalls++;
            open("rdma_disconnect");
            if (qp != null) {
                qp.enterError(); // librdmacm moves the QP to ERR before asking the kernel
            }
            if (state == State.CONNECTED) {
                stack.cm.disconnect(this, true);
            } else if (state != State.DISCONNECTED) {
                throw state("rdma_disconnect");
            }
        }
    }

    @Override
    public void close() {
        synchronized (stack.lock) {
            if (closed) {
                return;
            }
            if (state == State.CONNECTED) {
                stack.cm.disconnect(this, false);
            } else if (state == State.REQUEST) {
                rejectPeer(null); // destroying an unanswered request rejects it, like the kernel's CM
            }
            closed = true;
            if (qp != null) {
                for (InetAddress g : joined) {
                    stack.datagrams.detach(g, qp); // destroying an id leaves its groups
                }
            }
            joined.clear();
            stack.cm.unbind(this);
            stack.cm.ids.remove(this);
        }
        stack.resources.remove(LoopbackResources.Kind.CM_ID, this);
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public InetSocketAddress localAddress() {
        return closed ? null : local;
    }

    @Override
    public InetSocketAddress peerAddress() {
        return closed ? null : remote;
    }

    @Override
    public String toString() {
        return description();
    }
}
