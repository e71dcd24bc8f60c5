package io.reactiverdma.reactive.impl.verbs;

import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;

/**
 * An rdma_cm id ({@code struct rdma_cm_id}). Calls on one id are made by one thread (the engine's rdma_cm
 * event loop), in order with its events. A failed call throws a runtime exception naming the call (the
 * JNA side's {@code NativeCallException} carries the errno).
 */
public interface CmId {
    /** A key unique among the live ids of this stack (the native pointer on the real stack). */
    long key();

    /** For logs: the call-site description of this id. */
    String description();

    void bind(InetSocketAddress local);

    void listen(int backlog);

    /** {@code rdma_resolve_addr}: ADDR_RESOLVED or ADDR_ERROR follows. */
    void resolveAddress(@Nullable InetSocketAddress source, InetSocketAddress destination, int timeoutMs);

    /** {@code rdma_resolve_route}: ROUTE_RESOLVED or ROUTE_ERROR follows. */
    void resolveRoute(int timeoutMs);

    /** The device this id is bound to (after address resolution, or a connect request's id). */
    Device device();

    /** {@code rdma_create_qp}: a queue pair on this id, both queues on {@code cq}. */
    QueuePair createQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec);

    /**
     * {@code rdma_create_qp} of a UD queue pair on a bound id (rdma_cm moves it to RTS with the port
     * space's Q_Key), both queues on {@code cq}.
     */
    default QueuePair createDatagramQueuePair(ProtectionDomain pd, CompletionQueue cq, QpSpec spec) {
        throw unsupported();
    }

    /** The active MTU in bytes of the port this id is bound to (a UD message's payload is at most that). */
    default int activeMtu() {
        throw unsupported();
    }

    /**
     * {@code rdma_accept} of a UDP-port-space connect request (a SIDR request) for the datagram QP numbered
     * {@code qpNum}, which lives on another id: the requester learns that QP number and the Q_Key.
     */
    default void acceptDatagram(int qpNum) {
        throw unsupported();
    }

    /** {@code rdma_join_multicast} (the id's QP is attached): MULTICAST_JOIN or MULTICAST_ERROR follows. */
    default void joinMulticast(InetSocketAddress group) {
        throw unsupported();
    }

    /** {@code rdma_leave_multicast}: the QP is detached, datagrams to the group stop arriving. */
    default void leaveMulticast(InetSocketAddress group) {
        throw unsupported();
    }

    /** {@code ibv_create_ah} on {@code pd} from what rdma_cm resolved. Any thread. */
    default AddressHandle createAddressHandle(ProtectionDomain pd, DatagramRoute route) {
        throw unsupported();
    }

    /**
     * {@code ibv_create_ah_from_wc}: a handle that answers the sender of a datagram received on this id's
     * port; {@code grh} holds the 40 bytes the device wrote before its payload. Any thread.
     */
    default AddressHandle createReplyAddressHandle(ProtectionDomain pd, java.nio.ByteBuffer grh, int sourceQpn) {
        throw unsupported();
    }

    /** {@code rdma_destroy_qp}; idempotent. The device touches none of the QP's buffers afterwards. */
    void destroyQueuePair();

    /** {@code rdma_set_option(RDMA_OPTION_ID_TOS)}: the type of service, 0..255 (before resolving the route). */
    void setTypeOfService(int tos);

    /**
     * {@code rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)}: the QP's local ACK timeout exponent, 1..31 (4.096 us x
     * 2^n), applied when the QP moves to RTS (before connect or accept).
     */
    void setAckTimeout(int exponent);

    /** {@code rdma_connect}: ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR follows. */
    void connect(ConnectSpec spec);

    /** {@code rdma_accept} of a connect request's id. */
    void accept(ConnectSpec spec);

    /** {@code rdma_reject} with {@code privateData} for the peer. */
    void reject(byte[] privateData);

    /** {@code rdma_disconnect}: the QP moves to ERR (its posted work flushes) and the peer is told. */
    void disconnect();

    /** {@code rdma_destroy_id}; idempotent. */
    void close();

    boolean isClosed();

    /** This side's address, or null when not bound yet. */
    @Nullable
    InetSocketAddress localAddress();

    /** The peer's address, or null when not known. */
    @Nullable
    InetSocketAddress peerAddress();

    /** What a stack without datagram support (the loopback device) throws for the UD calls above. */
    private UnsupportedOperationException unsupported() {
        return new UnsupportedOperationException(getClass().getSimpleName() + " does not support datagrams (UD)");
    }
}
