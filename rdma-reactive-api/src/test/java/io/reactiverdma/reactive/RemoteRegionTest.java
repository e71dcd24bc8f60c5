package io.reactiverdma.reactive;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RemoteRegionTest {
    private static final long ADDRESS = 0x0102030405060708L;
    private static final long LENGTH = 0x1112131415161718L;
    private static final int RKEY = 0x21222324;

    /** The documented layout of {@code of(ADDRESS, LENGTH, RKEY)}: address, length, rkey, big-endian. */
    private static final byte[] ENCODED = {
            0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
            0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
            0x21, 0x22, 0x23, 0x24};

    @Test
    void ofKeepsItsArguments() {
        RemoteRegion r = RemoteRegion.of(ADDRESS, LENGTH, RKEY);
        assertEquals(ADDRESS, r.address());
        assertEquals(LENGTH, r.length());
        assertEquals(RKEY, r.rkey());
    }

    @Test
    void ofAcceptsEmptyAndHighHalfRegions() {
        assertEquals(0, RemoteRegion.of(0, 0, 0).length());
        // Addresses are unsigned: a region in the upper half of the address space is fine.
        RemoteRegion high = RemoteRegion.of(0x8000_0000_0000_0000L, 4096, -1);
        assertEquals(0x8000_0000_0000_0000L, high.address());
        assertEquals(-1, high.rkey());
        // Crossing 2^63 (signed overflow) is not a wrap-around of the unsigned address space.
        assertEquals(1, RemoteRegion.of(Long.MAX_VALUE, 1, 0).length());
        // Ends one byte before the top of the address space.
        assertEquals(15, RemoteRegion.of(-16L, 15, 0).length());
        // An empty region at the very last address.
        assertEquals(0, RemoteRegion.of(-1L, 0, 0).length());
    }

    @Test
    void ofRefusesNegativeLength() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> RemoteRegion.of(0x1000, -1, 1));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("-1"), e.getMessage());
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                assertThrows(InvalidRequestException.class, () -> RemoteRegion.of(0, Long.MIN_VALUE, 1)).reason());
    }

    @ParameterizedTest
    @CsvSource({
            "-1, 1",                     // 0xffff_ffff_ffff_ffff + 1
            "-1, 2",
            "-16, 16",                   // ends exactly at 2^64: the end address is not representable
            "-4096, 8192",
            "-9223372036854775807, 9223372036854775807", // 0x8000..01 + 0x7fff..ff
            "-1, 9223372036854775807"})
    void ofRefusesWrapAround(long address, long length) {
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> RemoteRegion.of(address, length, 0));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("wraps"), e.getMessage());
    }

    @Test
    void ofAcceptsARegionEndingAtTheLastAddress() {
        // 0x8000... + 0x7fff... = 0xffff...: the region's end is the last address, no wrap.
        assertEquals(Long.MAX_VALUE, RemoteRegion.of(Long.MIN_VALUE, Long.MAX_VALUE, 0).length());
    }

    @Test
    void toBytesHasTheDocumentedBigEndianLayout() {
        byte[] b = RemoteRegion.of(ADDRESS, LENGTH, RKEY).toBytes();
        assertEquals(RemoteRegion.ENCODED_SIZE, b.length);
        assertEquals(20, b.length);
        assertArrayEquals(ENCODED, b);
    }

    @Test
    void fromBytesReadsTheDocumentedLayout() {
        RemoteRegion r = RemoteRegion.fromBytes(ENCODED.clone());
        assertEquals(ADDRESS, r.address());
        assertEquals(LENGTH, r.length());
        assertEquals(RKEY, r.rkey());
    }

    @ParameterizedTest
    @CsvSource({
            "0, 0, 0",
            "4096, 65536, 305419896",
            "-4096, 4095, -1",
            "-9223372036854775808, 9223372036854775807, -2147483648",
            "140737488355328, 1, 2147483647"})
    void toBytesFromBytesRoundTrip(long address, long length, int rkey) {
        RemoteRegion r = RemoteRegion.of(address, length, rkey);
        byte[] b = r.toBytes();
        assertEquals(RemoteRegion.ENCODED_SIZE, b.length);
        RemoteRegion back = RemoteRegion.fromBytes(b);
        assertEquals(r, back);
        assertEquals(address, back.address());
        assertEquals(length, back.length());
        assertEquals(rkey, back.rkey());
    }

    @Test
    void fromBytesRefusesWrongLength() {
        for (int n : new int[] {0, 19, 21, 40}) {
            InvalidRequestException e = assertThrows(InvalidRequestException.class,
                    () -> RemoteRegion.fromBytes(new byte[n]), "length " + n);
            assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
            assertTrue(e.getMessage().contains("got " + n), e.getMessage());
        }
        assertThrows(NullPointerException.class, () -> RemoteRegion.fromBytes(null));
    }

    @Test
    void fromBytesRefusesAnEncodedNegativeLength() {
        byte[] b = ENCODED.clone();
        b[8] = (byte) 0x80; // length's top bit: a negative length
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> RemoteRegion.fromBytes(b));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
    }

    @Test
    void writeToAdvancesPositionWritesBigEndianAndRestoresOrder() {
        for (ByteBuffer buf : new ByteBuffer[] {ByteBuffer.allocate(32), ByteBuffer.allocateDirect(32)}) {
            buf.order(ByteOrder.LITTLE_ENDIAN).position(5);
            ByteBuffer returned = RemoteRegion.of(ADDRESS, LENGTH, RKEY).writeTo(buf);
            assertSame(buf, returned);
            assertEquals(25, buf.position());
            assertEquals(32, buf.limit());
            assertEquals(ByteOrder.LITTLE_ENDIAN, buf.order());
            byte[] written = new byte[20];
            buf.get(5, written);
            assertArrayEquals(ENCODED, written);
            assertEquals(0, buf.get(4));
            assertEquals(0, buf.get(25));
        }
    }

    @Test
    void writeToKeepsBigEndianOrderToo() {
        ByteBuffer buf = ByteBuffer.allocate(20).order(ByteOrder.BIG_ENDIAN);
        RemoteRegion.of(ADDRESS, LENGTH, RKEY).writeTo(buf);
        assertEquals(ByteOrder.BIG_ENDIAN, buf.order());
        assertArrayEquals(ENCODED, buf.array());
    }

    @Test
    void readFromAdvancesPositionAndRestoresOrder() {
        for (ByteBuffer buf : new ByteBuffer[] {ByteBuffer.allocate(30), ByteBuffer.allocateDirect(30)}) {
            buf.put(3, ENCODED);
            buf.position(3).order(ByteOrder.LITTLE_ENDIAN);
            RemoteRegion r = RemoteRegion.readFrom(buf);
            assertEquals(RemoteRegion.of(ADDRESS, LENGTH, RKEY), r);
            assertEquals(23, buf.position());
            assertEquals(ByteOrder.LITTLE_ENDIAN, buf.order());
        }
    }

    @Test
    void writeToWithTooLittleRoomIsRefusedBeforeWritingAnything() {
        ByteBuffer buf = ByteBuffer.allocate(RemoteRegion.ENCODED_SIZE - 1);
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> RemoteRegion.of(ADDRESS, LENGTH, RKEY).writeTo(buf));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertEquals(0, buf.position(), "nothing written");
    }

    @Test
    void writeToThenReadFromSeveralInOneBuffer() {
        RemoteRegion a = RemoteRegion.of(0x1000, 64, 7);
        RemoteRegion b = RemoteRegion.of(0x7f00_dead_0000L, 1 << 20, 0xcafe);
        ByteBuffer buf = ByteBuffer.allocate(2 * RemoteRegion.ENCODED_SIZE).order(ByteOrder.nativeOrder());
        b.writeTo(a.writeTo(buf));
        assertEquals(0, buf.remaining());
        buf.flip();
        assertEquals(a, RemoteRegion.readFrom(buf));
        assertEquals(b, RemoteRegion.readFrom(buf));
        assertEquals(0, buf.remaining());
        assertEquals(ByteOrder.nativeOrder(), buf.order());
    }

    @Test
    void readFromRefusesTooFewBytes() {
        ByteBuffer buf = ByteBuffer.allocate(40);
        buf.position(21).order(ByteOrder.LITTLE_ENDIAN); // 19 remain
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> RemoteRegion.readFrom(buf));
        assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        assertTrue(e.getMessage().contains("19"), e.getMessage());
        assertEquals(21, buf.position(), "position untouched on refusal");
        assertEquals(ByteOrder.LITTLE_ENDIAN, buf.order());
        assertThrows(InvalidRequestException.class, () -> RemoteRegion.readFrom(ByteBuffer.allocate(0)));
        assertThrows(NullPointerException.class, () -> RemoteRegion.readFrom(null));
    }

    @Test
    void writeToRefusesNull() {
        assertThrows(NullPointerException.class, () -> RemoteRegion.of(0, 1, 1).writeTo(null));
    }

    @Test
    void sliceInRange() {
        RemoteRegion r = RemoteRegion.of(0x1000, 100, 7);
        assertEquals(r, r.slice(0, 100));
        assertEquals(RemoteRegion.of(0x100a, 20, 7), r.slice(10, 20));
        assertEquals(RemoteRegion.of(0x1000, 0, 7), r.slice(0, 0));
        assertEquals(RemoteRegion.of(0x1064, 0, 7), r.slice(100, 0));
        assertEquals(RemoteRegion.of(0x1063, 1, 7), r.slice(99, 1));
        // A slice of a slice stays relative to its own start.
        assertEquals(RemoteRegion.of(0x100f, 5, 7), r.slice(10, 20).slice(5, 5));
    }

    @ParameterizedTest
    @CsvSource({
            "-1, 1",
            "0, -1",
            "-1, -1",
            "101, 0",
            "0, 101",
            "50, 51",
            "100, 1",
            "1, 100",
            "1, 9223372036854775807",
            "9223372036854775807, 1",
            "9223372036854775807, 9223372036854775807",
            "-9223372036854775808, 0"})
    void sliceOutsideTheRegionIsRefused(long offset, long length) {
        RemoteRegion r = RemoteRegion.of(0x1000, 100, 7);
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> r.slice(offset, length));
        assertEquals(InvalidRequestException.Reason.OUTSIDE_REGION, e.reason());
        assertTrue(e.getMessage().contains(Long.toString(offset)), e.getMessage());
    }

    @Test
    void equalsAndHashCode() {
        RemoteRegion r = RemoteRegion.of(ADDRESS, LENGTH, RKEY);
        RemoteRegion same = RemoteRegion.of(ADDRESS, LENGTH, RKEY);
        assertEquals(r, r);
        assertEquals(r, same);
        assertEquals(same, r);
        assertEquals(r.hashCode(), same.hashCode());
        assertNotEquals(r, RemoteRegion.of(ADDRESS + 1, LENGTH, RKEY));
        assertNotEquals(r, RemoteRegion.of(ADDRESS, LENGTH + 1, RKEY));
        assertNotEquals(r, RemoteRegion.of(ADDRESS, LENGTH, RKEY + 1));
        assertNotEquals(r, null);
        assertNotEquals(r, (Object) ENCODED);
        assertEquals(RemoteRegion.fromBytes(r.toBytes()).hashCode(), r.hashCode());
    }

    @Test
    void toStringShowsTheFields() {
        String s = RemoteRegion.of(0xabc0, 64, 0x1f).toString();
        assertTrue(s.contains("abc0"), s);
        assertTrue(s.contains("64"), s);
        assertTrue(s.contains("1f"), s);
    }
}
