package io.reactiverdma.cm;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The parts of the rdma_cm bindings that need no device. */
class CmHostTest {
    @Test
    void sockaddrRoundTripsIpv4AndIpv6() throws Exception {
        ByteBuffer b = NativeMemory.allocate(256);
        InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("10.77.0.1"), 7471);
        assertEquals(16, SocketAddresses.write(v4, b, 0));
        assertEquals(SocketAddresses.AF_INET, b.getShort(0));
        assertEquals((byte) 0x1d, b.get(2)); // port 7471 = 0x1d2f, big-endian on the wire
        assertEquals((byte) 0x2f, b.get(3));
        assertEquals(v4, SocketAddresses.read(b, 0));
        InetSocketAddress v6 = new InetSocketAddress(InetAddress.getByName("fe80::1"), 65535);
        assertEquals(28, SocketAddresses.write(v6, b, 128));
        assertEquals(v6.getPort(), SocketAddresses.read(b, 128).getPort());
        assertEquals(v6.getAddress(), SocketAddresses.read(b, 128).getAddress());
        b.putShort(0, (short) 0);
        assertNull(SocketAddresses.read(b, 0));
        assertThrows(IllegalArgumentException.class,
                () -> SocketAddresses.write(InetSocketAddress.createUnresolved("example", 1), b, 0));
    }

    @Test
    void connParamDefaultsAreSafeOnRxe() {
        ConnParam p = ConnParam.create();
        assertEquals(6, p.retryCount());
        assertEquals(3, p.rnrRetryCount());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.rnrRetryCount(7));
        assertTrue(e.getMessage().contains("forever"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> p.retryCount(8));
        assertThrows(IllegalArgumentException.class, () -> p.responderResources(256));
        assertThrows(NullPointerException.class, () -> p.privateData(null));
        assertThrows(IllegalArgumentException.class, () -> p.privateData(new byte[256]));
        ConnParam tooLong = p.privateData(new byte[57]);
        assertThrows(IllegalArgumentException.class,
                () -> tooLong.checkPrivateData("rdma_connect", ConnParam.MAX_CONNECT_PRIVATE_DATA));
        // immutable: setters return copies
        assertEquals(3, p.rnrRetryCount());
        assertEquals(0, p.rnrRetryCount(0).rnrRetryCount());
    }

    @Test
    void connParamWritesTheCStruct() {
        ByteBuffer b = NativeMemory.allocate(128);
        long base = NativeMemory.address(b);
        ConnParam.create().privateData(new byte[] {1, 2, 3}).initiatorDepth(4).responderResources(5)
                .writeTo(b, base, 0, 64);
        assertEquals(base + 64, b.getLong(CmStructs.ConnParamLayout.PRIVATE_DATA_OFFSET));
        assertEquals(3, b.get(CmStructs.ConnParamLayout.PRIVATE_DATA_LEN_OFFSET));
        assertEquals(5, b.get(CmStructs.ConnParamLayout.RESPONDER_RESOURCES_OFFSET));
        assertEquals(4, b.get(CmStructs.ConnParamLayout.INITIATOR_DEPTH_OFFSET));
        assertEquals(6, b.get(CmStructs.ConnParamLayout.RETRY_COUNT_OFFSET));
        assertEquals(3, b.get(CmStructs.ConnParamLayout.RNR_RETRY_COUNT_OFFSET));
        assertEquals(2, b.get(65));
    }

    @Test
    void eventTypesFollowTheCEnum() {
        assertEquals(0, CmEventType.ADDR_RESOLVED.value());
        assertEquals(8, CmEventType.REJECTED.value());
        assertEquals(9, CmEventType.ESTABLISHED.value());
        assertEquals(15, CmEventType.TIMEWAIT_EXIT.value());
        assertEquals(CmEventType.DISCONNECTED, CmEventType.of(10));
        assertThrows(IllegalArgumentException.class, () -> CmEventType.of(16));
        assertTrue(CmEventType.UNREACHABLE.isConnectFailure());
        assertEquals(PortSpace.UDP, PortSpace.of(0x111));
    }
}
