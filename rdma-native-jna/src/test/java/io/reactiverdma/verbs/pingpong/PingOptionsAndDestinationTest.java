package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.verbs.Gid;
import io.reactiverdma.verbs.Mtu;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PingOptionsAndDestinationTest {
    @Test
    void destinationMatchesIbvRcPingpongWireFormat() {
        Gid gid = Gid.parse("::ffff:10.77.0.1");
        Destination d = new Destination(0, 0x11, 0xabcdef, gid);
        byte[] wire = d.toWire();
        assertEquals(52, wire.length);
        assertEquals(0, wire[51]);
        // What ibv_rc_pingpong prints for the same values: "%04x:%06x:%06x:%s", the GID as raw bytes in hex.
        String expected = "0000:000011:abcdef:00000000000000000000ffff0a4d0001";
        assertEquals(expected, new String(wire, 0, 51, StandardCharsets.US_ASCII));
        assertEquals(d, Destination.fromWire(wire));
    }

    @Test
    void destinationRejectsGarbage() {
        assertThrows(IllegalArgumentException.class, () -> Destination.fromWire("hello".getBytes(StandardCharsets.US_ASCII)));
        assertThrows(IllegalArgumentException.class, () -> new Destination(0, 1 << 24, 0, Gid.ZERO));
        assertArrayEquals(new Destination(1, 2, 3, Gid.ZERO).toWire(),
                Destination.fromWire(new Destination(1, 2, 3, Gid.ZERO).toWire()).toWire());
    }

    @Test
    void parsesOptions() {
        PingOptions o = PingOptions.parse("client", "10.77.0.1", "-g", "1", "-s", "128", "-n", "10", "-m", "1024",
                "--no-verify");
        assertEquals(PingOptions.Mode.CLIENT, o.mode());
        assertEquals("10.77.0.1", o.host());
        assertEquals(1, o.gidIndex());
        assertEquals(128, o.size());
        assertEquals(10, o.iterations());
        assertEquals(Mtu.MTU_1024, o.mtu());
        assertFalse(o.verify());
        PingOptions d = PingOptions.parse("demo");
        assertNull(d.host());
        assertEquals(-1, d.gidIndex());
        assertTrue(d.verify());
    }

    @Test
    void rejectsBadOptions() {
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse());
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse("client"));
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse("demo", "--rnr-retry", "7"));
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse("demo", "-m", "1000"));
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse("demo", "-s", "x"));
        assertThrows(IllegalArgumentException.class, () -> PingOptions.parse("bogus"));
    }
}
