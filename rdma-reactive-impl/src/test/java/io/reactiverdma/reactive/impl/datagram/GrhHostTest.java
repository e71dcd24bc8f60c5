package io.reactiverdma.reactive.impl.datagram;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Where a UD receive's first 40 bytes keep the sender's and the destination's address. */
class GrhHostTest {
    @Test
    void roceV2OverIpv4KeepsTheIpv4HeaderAfterTwentyBytes() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(100);
        int base = 30;
        b.put(base + 20, (byte) 0x45); // IPv4, IHL 5
        b.put(base + 32, new byte[] {10, 77, 0, 1});
        b.put(base + 36, new byte[] {(byte) 239, 1, 2, 3});
        assertEquals(InetAddress.getByName("10.77.0.1"), Grh.source(b, base));
        assertEquals(InetAddress.getByName("239.1.2.3"), Grh.destination(b, base));
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
}
