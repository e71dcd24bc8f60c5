package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.RemoteRegion;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The bulk sample's pure logic: chunking, the window, progress lines, the protocol, the generated stream. */
class BulkLogicTest {
    @Test
    void aPlanCutsTheStreamIntoFullChunksAndARest() {
        ChunkPlan p = new ChunkPlan(10, 4);
        assertEquals(3, p.chunkCount());
        assertEquals(8, p.offset(2));
        assertEquals(4, p.length(1));
        assertEquals(2, p.length(2));
        assertThrows(IndexOutOfBoundsException.class, () -> p.length(3));
        assertEquals(2, new ChunkPlan(8, 4).chunkCount());
        assertEquals(0, new ChunkPlan(0, 4).chunkCount());
        assertEquals(1024, new ChunkPlan(1L << 30, 1 << 20).chunkCount());
        assertEquals(1L << 40, new ChunkPlan(1L << 40, 1).chunkCount());
    }

    @Test
    void theWindowNeverHoldsASlotTwiceAndRecordsItsHighWaterMark() {
        ChunkWindow w = new ChunkWindow(3);
        w.issue(0);
        w.issue(2);
        assertThrows(IllegalStateException.class, () -> w.issue(2), "already in flight");
        assertThrows(IllegalStateException.class, () -> w.issue(3), "outside the ring");
        assertEquals(2, w.inFlight());
        assertTrue(w.complete(0));
        assertFalse(w.complete(0), "not in flight any more");
        w.issue(0);
        w.issue(1);
        assertEquals(3, w.inFlight());
        assertEquals(3, w.maxInFlight());
        assertTrue(w.complete(1));
        assertEquals(2, w.inFlight());
        assertEquals(3, w.maxInFlight());
        assertEquals(4, w.issued());
        assertEquals(2, w.completed());
    }

    @Test
    void progressLinesSayBytesRateAndEtaAtMostOnceASecond() {
        long s = 1_000_000_000L;
        assertEquals("512.0 MiB of 1.00 GiB (50%), 16.0 MiB/s, ETA 0:32",
                Progress.format(512L << 20, 1L << 30, 32 * s));
        assertEquals("0 B of 100 B (0%), 0.0 MiB/s, ETA ?", Progress.format(0, 100, s));
        assertEquals("1.00 GiB of 1.00 GiB (100%), 1024.0 MiB/s, ETA 0:00", Progress.format(1L << 30, 1L << 30, s));
        Progress p = new Progress(0, s);
        long g = 1L << 30;
        assertTrue(p.line(1, g, s / 2).isEmpty(), "not before a second");
        assertEquals("100.0 MiB of 1.00 GiB (9%), 100.0 MiB/s, ETA 0:10", p.line(100L << 20, g, s).orElseThrow());
        assertTrue(p.line(200L << 20, g, s + s / 2).isEmpty(), "not twice in a second");
        assertTrue(p.line(200L << 20, g, 2 * s).isPresent());
        assertEquals("1:01:01", Progress.formatDuration(3661));
        assertEquals("0:02", Progress.formatDuration(1.2));
        assertEquals("999 B", Progress.bytes(999));
        assertEquals("64.0 KiB", Progress.bytes(64 << 10));
        assertEquals("1.5 MiB", Progress.bytes(3 << 19));
    }

    @Test
    void everyMessageSurvivesItsEncoding() {
        RemoteRegion region = RemoteRegion.of(0x7f00_1234_5000L, 1 << 20, 0xabcd);
        List<BulkProtocol.Message> all = List.of(
                new BulkProtocol.Hello(TransferMode.PULL, 1 << 20, 8, 1L << 30),
                new BulkProtocol.Advertise(7, region),
                new BulkProtocol.Ready(3, 123_456_789_012L, region),
                new BulkProtocol.Free(3, 42),
                new BulkProtocol.Result(1L << 30, new byte[32]),
                new BulkProtocol.Error("window 99 is not in 1..64"));
        for (BulkProtocol.Message m : all) {
            ByteBuffer b = BulkProtocol.encode(m);
            assertTrue(b.remaining() <= BulkProtocol.MAX_MESSAGE_SIZE);
            assertEquals(m, BulkProtocol.decode(b), m.toString());
        }
        assertEquals("0400000001", HexFormat.of().formatHex(BulkProtocol.encode(new BulkProtocol.Free(1, 1)).array(), 0, 5),
                "type byte, then the big-endian slot");
    }

    @Test
    void aLongErrorIsCutToFitTheReceiveBuffers() {
        String text = "é".repeat(300);
        ByteBuffer b = BulkProtocol.encode(new BulkProtocol.Error(text));
        assertTrue(b.remaining() <= BulkProtocol.MAX_MESSAGE_SIZE);
        String got = ((BulkProtocol.Error) BulkProtocol.decode(b)).text();
        assertTrue(text.startsWith(got) && got.length() > 100, got);
    }

    @Test
    void garbageIsAProtocolError() {
        for (byte[] bad : new byte[][] {{}, {9}, {1, 0x42, 0x55}, {4, 0, 0, 0, 1}, {4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 7},
                {1, 0x42, 0x55, 0x4C, 0x4B, 2, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1}}) {
            BulkTransferException e = assertThrows(BulkTransferException.class,
                    () -> BulkProtocol.decode(ByteBuffer.wrap(bad)), HexFormat.of().formatHex(bad));
            assertEquals(BulkTransferException.Reason.PROTOCOL, e.reason());
        }
    }

    @Test
    void theImmediateCarriesTheSlotAndTheSequenceLowBits() {
        int imm = BulkProtocol.immediate(63, 0x1_2345L);
        assertEquals(new BulkProtocol.Written(63, 0x2345), BulkProtocol.Written.of(imm));
        assertEquals(new BulkProtocol.Written(0, 0xFFFF), BulkProtocol.Written.of(BulkProtocol.immediate(0, 0xFFFF)));
        assertThrows(IllegalArgumentException.class, () -> BulkProtocol.immediate(65536, 0));
        assertThrows(IllegalArgumentException.class, () -> BulkProtocol.encode(new BulkProtocol.Written(1, 1)));
    }

    @Test
    void theGeneratedStreamDoesNotDependOnHowItIsCut() throws Exception {
        long size = 100_003;
        GeneratedStream g = new GeneratedStream(size);
        byte[] whole = read(g, 0, (int) size, false);
        for (int chunk : new int[] {1, 7, 4096, 65_536}) {
            MessageDigest sha = Hashing.sha256();
            for (long off = 0; off < size; off += chunk) {
                int n = (int) Math.min(chunk, size - off);
                sha.update(read(g, off, n, chunk % 2 == 1));
            }
            assertArrayEquals(Hashing.sha256().digest(whole), sha.digest(), "chunk " + chunk);
        }
        assertEquals(GeneratedStream.byteAt(12_345), whole[12_345]);
        assertNotEquals(ByteBuffer.wrap(whole, 0, 8).getLong(), ByteBuffer.wrap(whole, 8, 8).getLong());
        // Fixed: the stream is the same in every JVM and release (the rxe tests' hashes rely on it)
        assertEquals("e220a8397b1dcdaf", HexFormat.of().formatHex(whole, 0, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> g.read(size - 1, ByteBuffer.allocate(2)));
    }

    private static byte[] read(GeneratedStream g, long offset, int n, boolean directLittleEndian) {
        ByteBuffer b = directLittleEndian ? ByteBuffer.allocateDirect(n + 3).order(ByteOrder.LITTLE_ENDIAN)
                : ByteBuffer.allocate(n);
        b.position(directLittleEndian ? 3 : 0).limit((directLittleEndian ? 3 : 0) + n);
        g.read(offset, b);
        assertEquals(b.limit(), b.position());
        byte[] out = new byte[n];
        b.position(b.limit() - n);
        b.get(out);
        return out;
    }
}
