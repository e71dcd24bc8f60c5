package io.reactiverdma.reactive.impl.datagram;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

/**
 * Reads the sender's and the destination's IP address from the 40 bytes a UD receive starts with: an IB/IPv6
 * GRH (version 6: source GID at 8, destination GID at 24), or for RoCEv2 over IPv4 20 unused bytes followed
 * by the IPv4 header (source at 20+12, destination at 20+16).
 *
 * <p>Which of the two it is cannot be read from the first nibble alone: for RoCEv2 over IPv4 the first 20
 * bytes are undefined (rxe zeroes them, other devices leave whatever the buffer held), so they may well start
 * with 6. As rdma-core's {@code get_grh_header_version} (and the kernel's {@code ib_get_rdma_header_version}):
 * a first nibble other than 6 means IPv4; with 6, an IPv4 header at 20 (IHL 5, correct checksum) still means
 * IPv4, anything else an IB/IPv6 GRH.
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

    private static boolean isIpv6(ByteBuffer b, int base) {
        if ((b.get(base) & 0xff) >>> 4 != 6) {
            return false;
        }
        int ip4 = base + 20;
        if ((b.get(ip4) & 0xff) != 0x45) { // version 4, IHL 5: RoCEv2 sends no IPv4 options
            return true;
        }
        int check = ((b.get(ip4 + 10) & 0xff) << 8) | (b.get(ip4 + 11) & 0xff);
        return check != ipv4Checksum(b, ip4);
    }

    /** The Internet checksum of the 20-byte IPv4 header at {@code at}, its checksum field taken as 0. */
    static int ipv4Checksum(ByteBuffer b, int at) {
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            if (i != 10) {
                sum += ((b.get(at + i) & 0xff) << 8) | (b.get(at + i + 1) & 0xff);
            }
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return ~sum & 0xffff;
    }

    private static InetAddress address(ByteBuffer b, int base, boolean source) {
        byte[] a;
        if (isIpv6(b, base)) {
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
