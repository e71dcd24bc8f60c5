package io.reactiverdma.reactive.impl.datagram;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * Reads the sender's and the destination's IP address from the 40 bytes a UD receive starts with: an IB/IPv6
 * GRH (version 6: source GID at 8, destination GID at 24), or for RoCEv2 over IPv4 20 unused bytes followed
 * by the IPv4 header (source at 20+12, destination at 20+16).
 */
final class Grh {
    static final int SIZE = 40;

    private Grh() {
    }

    static InetAddress source(ByteBuffer b, int base) {
        return address(b, base, true);
    }

    static InetAddress destination(ByteBuffer b, int base) {
        return address(b, base, false);
    }

    private static InetAddress address(ByteBuffer b, int base, boolean source) {
        byte[] a;
        if ((b.get(base) & 0xff) >>> 4 == 6) {
            a = new byte[16];
            b.get(base + (source ? 8 : 24), a);
        } else {
            a = new byte[4];
            b.get(base + 20 + (source ? 12 : 16), a);
        }
        try {
            return InetAddress.getByAddress(a); // an IPv4-mapped GID comes back as its IPv4 address
        } catch (UnknownHostException impossible) {
            throw new IllegalStateException(impossible);
        }
    }
}
