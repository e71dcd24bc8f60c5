package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConnectionEventTest {
    private static final InetSocketAddress PEER = InetSocketAddress.createUnresolved("10.0.0.2", 7471);

    @Test
    void keepsItsFields() {
        ConnectionEvent e = new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 2, 3}, PEER);
        assertEquals(ConnectionEvent.Type.REJECTED, e.type());
        assertEquals(28, e.status());
        assertArrayEquals(new byte[] {1, 2, 3}, e.privateData());
        assertSame(PEER, e.peerAddress());
    }

    @Test
    void privateDataIsCopiedOnTheWayIn() {
        byte[] data = {1, 2, 3};
        ConnectionEvent e = new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, 0, data, PEER);
        data[0] = 99;
        assertArrayEquals(new byte[] {1, 2, 3}, e.privateData());
    }

    @Test
    void privateDataIsCopiedOnTheWayOut() {
        ConnectionEvent e = new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, 0, new byte[] {1, 2, 3}, PEER);
        byte[] out = e.privateData();
        out[0] = 99;
        assertArrayEquals(new byte[] {1, 2, 3}, e.privateData());
        assertNotSame(e.privateData(), e.privateData());
    }

    @Test
    void nullPrivateDataIsEmpty() {
        ConnectionEvent e = new ConnectionEvent(ConnectionEvent.Type.ESTABLISHED, 0, null, null);
        assertEquals(0, e.privateData().length);
        assertNull(e.peerAddress());
        assertEquals(new ConnectionEvent(ConnectionEvent.Type.ESTABLISHED, 0, new byte[0], null), e);
    }

    @Test
    void typeIsRequired() {
        assertThrows(NullPointerException.class, () -> new ConnectionEvent(null, 0, null, null));
    }

    @Test
    void equalsComparesPrivateDataByContent() {
        ConnectionEvent a = new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 2}, PEER);
        ConnectionEvent b = new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 2},
                InetSocketAddress.createUnresolved("10.0.0.2", 7471));
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, new ConnectionEvent(ConnectionEvent.Type.UNREACHABLE, 28, new byte[] {1, 2}, PEER));
        assertNotEquals(a, new ConnectionEvent(ConnectionEvent.Type.REJECTED, 27, new byte[] {1, 2}, PEER));
        assertNotEquals(a, new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 3}, PEER));
        assertNotEquals(a, new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 2}, null));
        assertNotEquals(a, null);
    }

    @Test
    void toStringContents() {
        String s = new ConnectionEvent(ConnectionEvent.Type.REJECTED, 28, new byte[] {1, 2, 3}, PEER).toString();
        assertTrue(s.contains("REJECTED"), s);
        assertTrue(s.contains("status=28"), s);
        assertTrue(s.contains("3 bytes"), s);
        assertTrue(s.contains("10.0.0.2"), s);
        String plain = new ConnectionEvent(ConnectionEvent.Type.CLOSED, 0, null, null).toString();
        assertTrue(plain.contains("CLOSED"), plain);
        assertFalse(plain.contains("status"), plain);
        assertFalse(plain.contains("privateData"), plain);
        assertFalse(plain.contains("peer"), plain);
    }
}
