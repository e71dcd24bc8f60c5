package io.reactiverdma.reactive;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Objects;

/**
 * One change of a connection's state, mapped from an rdma_cm event (or, for {@link Type#CLOSED}, the end of
 * the local close). Immutable.
 */
public final class ConnectionEvent {
    /** What happened. The names follow rdma_cm's events ({@code RDMA_CM_EVENT_*}). */
    public enum Type {
        /** The destination address was resolved to a local RDMA device. */
        ADDRESS_RESOLVED,
        /** The address could not be resolved (status: negative errno). */
        ADDRESS_ERROR,
        /** The route to the destination was resolved. */
        ROUTE_RESOLVED,
        /** The route could not be resolved (status: negative errno). */
        ROUTE_ERROR,
        /** A peer asked a server for a connection (server events only). */
        CONNECT_REQUEST,
        /** The connection is up: operations flow. */
        ESTABLISHED,
        /** The peer rejected the connection; {@link #privateData()} is what it sent with the reject. */
        REJECTED,
        /** The peer could not be reached (no response). */
        UNREACHABLE,
        /** The connection could not be established (status: negative errno). */
        CONNECT_ERROR,
        /** Either side disconnected: the queue pair is in the error state. */
        DISCONNECTED,
        /** The RDMA device was removed: the connection is unusable. */
        DEVICE_REMOVAL,
        /** The queue pair left the CM's time-wait state (its number may be reused). */
        TIMEWAIT_EXIT,
        /** The local address changed (for example a bonding fail-over). */
        ADDRESS_CHANGE,
        /** The local side finished closing: every operation terminated, every native object released. */
        CLOSED
    }

    private final Type type;
    private final int status;
    private final byte[] privateData;
    private final InetSocketAddress peerAddress;

    public ConnectionEvent(Type type, int status, byte[] privateData, InetSocketAddress peerAddress) {
        this.type = Objects.requireNonNull(type, "type");
        this.status = status;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
        this.peerAddress = peerAddress;
    }

    public Type type() {
        return type;
    }

    /** The rdma_cm event status: 0, a negative errno, or for {@link Type#REJECTED} the CM reject reason. */
    public int status() {
        return status;
    }

    /** The peer's private data carried by the event (a copy; empty when none). */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** The peer's address, or null when not known yet. */
    public InetSocketAddress peerAddress() {
        return peerAddress;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectionEvent e && e.type == type && e.status == status
                && Arrays.equals(e.privateData, privateData) && Objects.equals(e.peerAddress, peerAddress);
    }

    @Override
    public int hashCode() {
        return Objects.hash(type, status, Arrays.hashCode(privateData), peerAddress);
    }

    @Override
    public String toString() {
        return "ConnectionEvent{" + type + (status != 0 ? ", status=" + status : "")
                + (privateData.length > 0 ? ", privateData=" + privateData.length + " bytes" : "")
                + (peerAddress != null ? ", peer=" + peerAddress : "") + "}";
    }
}
