package io.reactiverdma.verbs;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Arguments are refused in Java, before any native call, with messages that name the parameter. */
class ValidationTest {

    @Test
    void rnrRetrySevenIsRefusedBecauseItRetriesForever() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new QpAttributes().rnrRetry(7));
        assertTrue(e.getMessage().contains("rnrRetry 7"), e.getMessage());
        assertTrue(e.getMessage().contains("retry forever"), e.getMessage());
        assertTrue(e.getMessage().contains("rxe"), e.getMessage());
        assertEquals(0, new QpAttributes().rnrRetry(0).rnrRetry(), "0 is allowed: tests use it");
        assertEquals(6, new QpAttributes().rnrRetry(6).rnrRetry());
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().rnrRetry(-1));
    }

    @Test
    void timeoutZeroIsRefusedBecauseItWaitsForever() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new QpAttributes().timeout(0));
        assertTrue(e.getMessage().contains("timeout 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().timeout(32));
        assertEquals(31, new QpAttributes().timeout(31).timeout());
    }

    @Test
    void queriedUnsafeValuesAreRefusedWhenApplied() {
        java.nio.ByteBuffer b = Buffers.allocate(QpAttributes.SIZE);
        new QpAttributes().writeTo(b, 0);
        b.put(QpAttributes.RNR_RETRY_OFFSET, (byte) 7);
        b.put(QpAttributes.TIMEOUT_OFFSET, (byte) 0);
        QpAttributes fromQuery = QpAttributes.read(b, 0);
        assertEquals(7, fromQuery.rnrRetry());
        assertThrows(IllegalArgumentException.class, () -> fromQuery.validate(QpAttrMask.RC_RTS));
        fromQuery.validate(QpAttrMask.RC_RTR); // neither field selected
    }

    @Test
    void defaultsAreSafeOnSoftRoce() {
        QpAttributes a = new QpAttributes();
        assertEquals(14, a.timeout());
        assertEquals(6, a.retryCnt());
        assertEquals(3, a.rnrRetry());
        assertEquals(12, a.minRnrTimer());
        assertEquals(1, a.portNum());
        a.validate(QpAttrMask.ALL);
    }

    @Test
    void rangesAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().sqPsn(1 << 24));
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().destQpNum(-1));
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().portNum(0));
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().retryCnt(8));
        assertThrows(IllegalArgumentException.class, () -> new QpAttributes().minRnrTimer(32));
        assertThrows(NullPointerException.class, () -> new QpAttributes().pathMtu(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new QpAttributes().accessFlags(AccessFlags.REMOTE_WRITE));
        assertTrue(e.getMessage().contains("require LOCAL_WRITE"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new AddressHandleAttributes().sgidIndex(256));
        assertThrows(IllegalArgumentException.class, () -> new AddressHandleAttributes().flowLabel(1 << 20));
        NullPointerException npe = assertThrows(NullPointerException.class, () -> new AddressHandleAttributes().global(null, 1));
        assertEquals("dgid", npe.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new SrqAttributes(-1, 1, 0));
        assertThrows(IllegalArgumentException.class, () -> new WorkCompletions(0));
        assertThrows(IllegalArgumentException.class, () -> new ReceiveWorkRequests(1, 65));
    }

    @Test
    void accessFlagsDescribeThemselves() {
        assertEquals("LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ|REMOTE_ATOMIC", AccessFlags.describe(AccessFlags.ALL_REMOTE));
        assertEquals("0", AccessFlags.describe(0));
        assertEquals(0x3ff00000, AccessFlags.OPTIONAL_RANGE);
    }

    @Test
    void gidsParseFormatAndMapIpv4() throws Exception {
        Gid v4 = Gid.of(InetAddress.getByName("10.77.0.1"));
        assertTrue(v4.isIpv4Mapped());
        assertEquals("::ffff:10.77.0.1", v4.toString());
        assertEquals(v4, Gid.parse("::ffff:10.77.0.1"));
        assertEquals(v4, Gid.parse("10.77.0.1"));
        assertEquals(InetAddress.getByName("10.77.0.1"), v4.toInetAddress());
        Gid link = Gid.parse("fe80::5cd4:c6ff:fe62:be40");
        assertEquals("fe80::5cd4:c6ff:fe62:be40", link.toString());
        assertEquals(0xfe80000000000000L, link.subnetPrefix());
        assertEquals(0x5cd4c6fffe62be40L, link.interfaceId());
        assertFalse(link.isIpv4Mapped());
        assertTrue(Gid.ZERO.isZero());
        assertEquals("::", Gid.ZERO.toString());
        assertEquals("1::2:0:0:3", Gid.parse("1:0:0:0:2:0:0:3").toString());
        assertThrows(IllegalArgumentException.class, () -> Gid.parse("example.com"));
        assertThrows(IllegalArgumentException.class, () -> Gid.of(new byte[15]));
    }
}
