package io.reactiverdma.cm;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Objects;

/** {@code struct sockaddr_in}/{@code sockaddr_in6} to and from {@link InetSocketAddress}. */
final class SocketAddresses {
    static final short AF_INET = 2;
    static final short AF_INET6 = 10;

    private SocketAddresses() {
    }

    /** Writes {@code address} as a sockaddr at {@code offset} (128 bytes zeroed first); returns its length. */
    static int write(InetSocketAddress address, ByteBuffer b, int offset) {
        Objects.requireNonNull(address, "address");
        if (address.isUnresolved()) {
            throw new IllegalArgumentException("address " + address + " is unresolved: give an IP address "
                    + "(or use RdmaAddrInfo.resolve)");
        }
        for (int i = 0; i < CmStructs.SockaddrStorage.SIZE; i++) {
            b.put(offset + i, (byte) 0);
        }
        InetAddress ip = address.getAddress();
        short portBe = Short.reverseBytes((short) address.getPort());
        if (ip instanceof Inet4Address) {
            b.putShort(offset + CmStructs.SockaddrIn.FAMILY_OFFSET, AF_INET);
            b.putShort(offset + CmStructs.SockaddrIn.PORT_OFFSET, portBe);
            b.put(offset + CmStructs.SockaddrIn.ADDR_OFFSET, ip.getAddress());
            return CmStructs.SockaddrIn.SIZE;
        }
        b.putShort(offset + CmStructs.SockaddrIn6.FAMILY_OFFSET, AF_INET6);
        b.putShort(offset + CmStructs.SockaddrIn6.PORT_OFFSET, portBe);
        b.put(offset + CmStructs.SockaddrIn6.ADDR_OFFSET, ip.getAddress());
        b.putInt(offset + CmStructs.SockaddrIn6.SCOPE_ID_OFFSET, ((Inet6Address) ip).getScopeId());
        return CmStructs.SockaddrIn6.SIZE;
    }

    /** Reads a sockaddr at {@code offset}; null when its family is neither AF_INET nor AF_INET6 (unset). */
    static InetSocketAddress read(ByteBuffer b, int offset) {
        short family = b.getShort(offset);
        try {
            if (family == AF_INET) {
                byte[] ip = new byte[4];
                b.get(offset + CmStructs.SockaddrIn.ADDR_OFFSET, ip);
                return new InetSocketAddress(InetAddress.getByAddress(ip),
                        Short.toUnsignedInt(Short.reverseBytes(b.getShort(offset + CmStructs.SockaddrIn.PORT_OFFSET))));
            }
            if (family == AF_INET6) {
                byte[] ip = new byte[16];
                b.get(offset + CmStructs.SockaddrIn6.ADDR_OFFSET, ip);
                int scope = b.getInt(offset + CmStructs.SockaddrIn6.SCOPE_ID_OFFSET);
                InetAddress a = scope != 0 ? Inet6Address.getByAddress(null, ip, scope) : InetAddress.getByAddress(ip);
                return new InetSocketAddress(a,
                        Short.toUnsignedInt(Short.reverseBytes(b.getShort(offset + CmStructs.SockaddrIn6.PORT_OFFSET))));
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException("bad address bytes", e);
        }
        return null;
    }
}
