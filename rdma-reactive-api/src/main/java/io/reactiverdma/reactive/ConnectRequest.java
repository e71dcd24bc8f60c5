package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * A connection request as a server's {@link RdmaServer#accept acceptor} sees it, before anything is allocated
 * for it: who asks, and the private data the peer's application sent with its connect
 * ({@link RdmaClient#privateData(byte[])}). The peer is untrusted: its private data is whatever arrived.
 */
public final class ConnectRequest {
    private final InetSocketAddress remoteAddress;
    private final InetSocketAddress localAddress;
    private final byte[] privateData;

    /** Made by the engine for each request it admits to the acceptor. */
    public ConnectRequest(@Nullable InetSocketAddress remoteAddress, @Nullable InetSocketAddress localAddress,
            byte[] privateData) {
        this.remoteAddress = remoteAddress;
        this.localAddress = localAddress;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** The requesting peer's address; null when rdma_cm could not tell. */
    @Nullable
    public InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    /** The server's address the request came to; null when rdma_cm could not tell. */
    @Nullable
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * The peer application's private data (a copy; empty when none). From a client of this framework exactly
     * what it passed to {@link RdmaClient#privateData(byte[])}; from a plain rdma_cm peer its whole private
     * data as the CM delivered it, without the trailing zero bytes the CM pads it with.
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return "ConnectRequest{from " + remoteAddress + ", " + privateData.length + " bytes of private data}";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ConnectRequest r && java.util.Objects.equals(remoteAddress, r.remoteAddress)
                && java.util.Objects.equals(localAddress, r.localAddress) && Arrays.equals(privateData, r.privateData);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(remoteAddress, localAddress, Arrays.hashCode(privateData));
    }
}
