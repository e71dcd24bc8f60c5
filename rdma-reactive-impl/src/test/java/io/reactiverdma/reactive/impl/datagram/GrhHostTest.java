package io.reactiverdma.reactive.impl.datagram;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Where a UD receive's first 40 bytes keep the sender's and the destination's address, and how IPv4 (RoCEv2)
 * is told from an IB/IPv6 GRH when the first 20 bytes of an IPv4 one are undefined (real NICs leave them as
 * they were; rxe zeroes them), as rdma-core's {@code get_grh_header_version} and the kernel's
 * {@code ib_get_rdma_header_version} do.
 */
class GrhHostTest {
    /** A valid 20-byte IPv4 header (IHL 5, checksum right) at {@code at}: UDP from {@code src} to {@code dst}. */
    static void ipv4Header(ByteBuffer b, int at, byte[] src, byte[] dst) {
        b.put(at, (byte) 0x45);
        b.putShort(at + 2, (short) 1064); // total length
        b.put(at + 8, (byte) 64); // TTL
        b.put(at + 9, (byte) 17); // UDP
        b.put(at + 12, src);
        b.put(at + 16, dst);
        b.putShort(at + 10, (short) Grh.ipv4Checksum(b, at));
    }

    @Test
    void roceV2OverIpv4KeepsTheIpv4HeaderAfterTwentyBytes() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(100);
        int base = 30;
        ipv4Header(b, base + 20, new byte[] {10, 77, 0, 1}, new byte[] {(byte) 239, 1, 2, 3});
        assertEquals(InetAddress.getByName("10.77.0.1"), Grh.source(b, base));
        assertEquals(InetAddress.getByName("239.1.2.3"), Grh.destination(b, base));
    }

    /** Finding 8 of the engine review: a garbage first byte of 0x6? made this IPv4 datagram "IPv6". */
    @Test
    void anIpv4GrhWhoseUndefinedFirstByteLooksLikeIpv6IsStillIpv4() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(40);
        for (int i = 0; i < 20; i++) {
            b.put(i, (byte) (0x60 + i * 37)); // undefined bytes, version nibble 6 first
        }
        ipv4Header(b, 20, new byte[] {10, 77, 0, 1}, new byte[] {10, 77, 0, 2});
        assertEquals(InetAddress.getByName("10.77.0.1"), Grh.source(b, 0));
        assertEquals(InetAddress.getByName("10.77.0.2"), Grh.destination(b, 0));
    }

    @Test
    void anIbGrhKeepsGidsAndAnIpv4MappedGidIsItsIpv4Address() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(40);
        b.put(0, (byte) 0x60);
        b.put(8, InetAddress.getByName("fe80::1").getAddress());
        byte[] mapped = new byte[16];
        mapped[10] = (byte) 0xff;
        mapped[11] = (byte) 0xff;
        mapped[12] = 10;
        mapped[15] = 2;
        b.put(24, mapped);
        assertEquals(InetAddress.getByName("fe80::1"), Grh.source(b, 0));
        assertEquals(InetAddress.getByName("10.0.0.2"), Grh.destination(b, 0));
    }

    /**
     * An IPv6 GRH whose source GID's bytes at 20.. happen to read 0x45 (IHL 5) is still IPv6: without a valid
     * checksum there the bytes are not an IPv4 header.
     */
    @Test
    void anIpv6GrhWhoseGidLooksLikeAnIpv4HeaderWithoutItsChecksumIsIpv6() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(40);
        b.put(0, (byte) 0x60);
        byte[] src = InetAddress.getByName("fd00::4500:1").getAddress();
        b.put(8, src);
        b.put(24, InetAddress.getByName("fd00::2").getAddress());
        assertEquals(0x45, b.get(20) & 0xff, "the GID's byte 12 sits where an IPv4 header would start");
        assertEquals(InetAddress.getByName("fd00::4500:1"), Grh.source(b, 0));
        assertEquals(InetAddress.getByName("fd00::2"), Grh.destination(b, 0));
    }
}
