package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The server's table on plain direct buffers, read back the way a client decodes its READs (probe window,
 * slot checks, value area).
 */
class KvTableTest {
    private final KvLayout layout = KvCodecTest.layout(64, 8);
    private final ByteBuffer tableBytes = ByteBuffer.allocateDirect((int) layout.table().length());
    private final AtomicLong clockNs = new AtomicLong();
    private final KvTable table = new KvTable(layout, tableBytes, ByteBuffer.allocateDirect(32), 100, clockNs::get);

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** What a client's GET would return, reading the table's bytes directly. */
    private byte[] get(String key) {
        byte[] k = bytes(key);
        int slot = layout.homeSlot(k);
        for (int i = 0; i < layout.maxProbe(); i++, slot = (slot + 1) % layout.slotCount()) {
            SlotCodec.Slot s = SlotCodec.decode(tableBytes, (int) layout.slotOffset(slot), layout.slotSize(),
                    layout.keyMaxBytes(), layout.inlineMaxBytes(), true);
            assertEquals(SlotCodec.Check.VALID, s.check());
            if (s.holds(k)) {
                if (s.inlineValue() != null) {
                    return s.inlineValue();
                }
                byte[] v = new byte[s.valueLength()];
                tableBytes.get(table.tableOffset(s.valueOffset()), v);
                return v;
            }
            if (s.state() == SlotCodec.EMPTY) {
                return null;
            }
        }
        return null;
    }

    private SlotCodec.Slot slotOf(String key) {
        byte[] k = bytes(key);
        for (int i = 0; i < layout.slotCount(); i++) {
            SlotCodec.Slot s = SlotCodec.decode(tableBytes, (int) layout.slotOffset(i), layout.slotSize(),
                    layout.keyMaxBytes(), layout.inlineMaxBytes(), true);
            if (s.holds(k)) {
                return s;
            }
        }
        return null;
    }

    @Test
    void putGetDeleteInlineAndOutOfLine() {
        table.put(bytes("a"), bytes("small"));
        byte[] big = new byte[10_000];
        new Random(1).nextBytes(big);
        table.put(bytes("b"), big);
        assertArrayEquals(bytes("small"), get("a"));
        assertArrayEquals(big, get("b"));
        assertNull(get("c"));
        assertEquals(2, table.liveEntries());
        assertEquals(16384, table.valueBytesInUse());
        assertTrue(table.delete(bytes("b")));
        assertFalse(table.delete(bytes("b")));
        assertNull(get("b"));
        assertEquals(0, table.valueBytesInUse());
        assertEquals(1, table.liveEntries());
    }

    @Test
    void aReplacedValueGoesToAFreshBlockAndTheOldOneIsReusedAfterTheDelayWithANewGeneration() {
        byte[] v1 = new byte[1000];
        byte[] v2 = new byte[1000];
        v2[0] = 2;
        table.put(bytes("k"), v1);
        SlotCodec.Slot first = slotOf("k");
        assertEquals(2, first.blockGeneration());
        table.put(bytes("k"), v2);
        SlotCodec.Slot second = slotOf("k");
        assertNotEquals(first.valueOffset(), second.valueOffset(), "never rewritten in place");
        assertTrue(second.version() > first.version());
        // The old block still holds the old value and its generation: a reader still reading it gets the
        // old value whole, and its re-check passes.
        byte[] old = new byte[1000];
        tableBytes.get(table.tableOffset(first.valueOffset()), old);
        assertArrayEquals(v1, old);
        assertEquals(2, blockGeneration(first.valueOffset()));
        table.put(bytes("other"), new byte[1000]); // within the reuse delay: fresh space
        assertNotEquals(first.valueOffset(), slotOf("other").valueOffset());
        clockNs.addAndGet(100);
        table.put(bytes("third"), new byte[1000]); // after it: the oldest freed block, a new generation
        assertEquals(first.valueOffset(), slotOf("third").valueOffset());
        assertEquals(4, slotOf("third").blockGeneration());
        assertEquals(4, blockGeneration(first.valueOffset()));
    }

    @Test
    void aBlockBeingRefilledHasAnOddGeneration() {
        long block = table.reserve(bytes("r"), 3000);
        assertEquals(1, blockGeneration(block), "odd until published");
        table.publishBlock(bytes("r"), 3000, block);
        assertEquals(2, blockGeneration(block));
    }

    @Test
    void withoutNeverUsedSpaceAFreedBlockIsReusedAtOnce() {
        table.put(bytes("a"), new byte[layout.maxValueBytes()]); // the whole area: one block
        long block = slotOf("a").valueOffset();
        table.put(bytes("a"), bytes("x")); // inline now: the block is freed
        table.put(bytes("b"), new byte[layout.maxValueBytes()]); // no space left: reused within the delay
        assertEquals(block, slotOf("b").valueOffset());
        assertEquals(4, slotOf("b").blockGeneration());
    }

    private long blockGeneration(long blockOffset) {
        return tableBytes.getLong(table.tableOffset(blockOffset) - KvTable.BLOCK_HEADER_BYTES);
    }

    @Test
    void collidingKeysProbeAndTombstonesAreReused() {
        // Keys with the same home slot, found by search.
        List<String> same = new ArrayList<>();
        int home = layout.homeSlot(bytes("x0"));
        for (int i = 0; same.size() < 3; i++) {
            if (layout.homeSlot(bytes("x" + i)) == home) {
                same.add("x" + i);
            }
        }
        for (String k : same) {
            table.put(bytes(k), bytes(k));
        }
        for (String k : same) {
            assertArrayEquals(bytes(k), get(k));
        }
        assertTrue(table.delete(bytes(same.get(0))));
        assertArrayEquals(bytes(same.get(2)), get(same.get(2)), "probing goes on past a tombstone");
        table.put(bytes(same.get(0)), bytes("again"));
        assertArrayEquals(bytes("again"), get(same.get(0)));
        assertEquals(3, table.liveEntries());
    }

    @Test
    void aFullProbeWindowIsTableFull() {
        int home = layout.homeSlot(bytes("y0"));
        int stored = 0;
        KvException full = null;
        for (int i = 0; full == null; i++) {
            if (layout.homeSlot(bytes("y" + i)) != home) {
                continue;
            }
            try {
                table.put(bytes("y" + i), new byte[1]);
                stored++;
            } catch (KvException e) {
                full = e;
            }
        }
        assertEquals(KvException.Reason.TABLE_FULL, full.reason());
        assertEquals(layout.maxProbe(), stored);
    }

    @Test
    void sizesAreCheckedWithTypedErrors() {
        assertEquals(KvException.Reason.KEY_TOO_LONG,
                assertThrows(KvException.class, () -> table.put(new byte[0], new byte[1])).reason());
        assertEquals(KvException.Reason.KEY_TOO_LONG, assertThrows(KvException.class,
                () -> table.put(new byte[layout.keyMaxBytes() + 1], new byte[1])).reason());
        assertEquals(KvException.Reason.VALUE_TOO_LARGE, assertThrows(KvException.class,
                () -> table.put(bytes("k"), new byte[layout.maxValueBytes() + 1])).reason());
        table.put(bytes("a"), new byte[layout.maxValueBytes()]); // a 64 KiB block: the whole area
        assertEquals(KvException.Reason.VALUE_AREA_FULL, assertThrows(KvException.class,
                () -> table.put(bytes("c"), new byte[layout.maxValueBytes()])).reason());
        assertEquals(0, table.counter(bytes("c0")));
        assertEquals(0, table.counter(bytes("c0")));
        for (int i = 1; i < layout.counterCount(); i++) {
            assertEquals(i, table.counter(bytes("c" + i)));
        }
        assertEquals(KvException.Reason.COUNTERS_FULL,
                assertThrows(KvException.class, () -> table.counter(bytes("one-too-many"))).reason());
        assertEquals(0L, table.counterValue("c0"));
        assertNull(table.counterValue("none"));
    }

    @Test
    void aReservedBlockIsPublishedOrFreed() {
        long block = table.reserve(bytes("r"), 3000);
        tableBytes.put(table.tableOffset(block), new byte[] {1, 2, 3});
        assertNull(get("r"), "not visible before it is published");
        table.publishBlock(bytes("r"), 3000, block);
        assertEquals(1, get("r")[0]);
        long other = table.reserve(bytes("s"), 3000);
        table.free(other, 3000);
        clockNs.addAndGet(100);
        assertEquals(other, table.reserve(bytes("t"), 3000), "a freed reservation is reused");
        assertEquals(3, blockGeneration(other), "odd again: it was never published");
    }

    @Test
    void blockSizesArePowersOfTwoFrom64() {
        // The value plus its 8-byte generation word.
        assertEquals(64, KvTable.blockSize(1));
        assertEquals(64, KvTable.blockSize(56));
        assertEquals(128, KvTable.blockSize(57));
        assertEquals(1 << 20, KvTable.blockSize((1 << 20) - 8));
        assertEquals(2 << 20, KvTable.blockSize(1 << 20));
    }

    @Test
    void serverOptionsAreChecked() {
        KvServerOptions d = KvServerOptions.defaults("10.0.0.1");
        assertEquals(KvException.Reason.ILLEGAL_ARGUMENT,
                assertThrows(KvException.class, () -> d.withTable(8, 9)).reason());
        assertThrows(KvException.class, () -> d.withValues(1 << 20, 1000));
        assertThrows(KvException.class, () -> d.withPort(70000));
        assertThrows(KvException.class, () -> new KvServerOptions("h", 0, 16, 100, 8, 4, 10, 0, 0, 4096,
                java.time.Duration.ZERO, io.reactiverdma.samples.common.ServerLimits.DEFAULTS));
        assertThrows(KvException.class, () -> d.withBlockReuseDelay(java.time.Duration.ofMillis(-1)));
    }
}
