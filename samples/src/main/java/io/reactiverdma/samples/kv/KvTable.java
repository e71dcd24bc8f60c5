package io.reactiverdma.samples.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The server's side of the table: writes slots and values into the registered memory that clients READ,
 * and hands out counter words. Every method is {@code synchronized}: slots have a single writer at a time
 * (the seqlock needs that), and the work under the lock is a few memory copies, never I/O.
 *
 * <p>Values that do not fit in a slot go to the value area, in blocks of power-of-two size classes (64 B
 * up), and <b>are never overwritten in place while a slot points at them</b>: a PUT writes the new value
 * into a fresh block, then publishes the slot, then frees the old block. Freed blocks are reused oldest
 * first (a FIFO per size class), so a block is rewritten as late as possible. That only makes retries
 * rare; correctness does not depend on it: a client checks, after reading a value, that the slot's version
 * did not change, and a block is freed only after its slot changed.
 */
final class KvTable {
    static final int MIN_BLOCK_BYTES = 64;
    private static final VarHandle COUNTER_WORDS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final KvLayout layout;
    private final ByteBuffer table;
    private final ByteBuffer counters;
    private final int valueAreaStart;
    @SuppressWarnings("unchecked")
    private final ArrayDeque<Long>[] freeBlocks = new ArrayDeque[32];
    private final Map<String, Integer> counterIndex = new HashMap<>();
    private long bumpOffset;
    private long valueBytesInUse;
    private int liveEntries;

    /**
     * @param table    the slots and value area, as {@code layout} describes (a view of registered memory)
     * @param counters the counter words
     */
    KvTable(KvLayout layout, ByteBuffer table, ByteBuffer counters) {
        this.layout = layout;
        this.table = table.duplicate().order(ByteOrder.BIG_ENDIAN);
        this.counters = counters.duplicate().order(ByteOrder.nativeOrder()); // atomics use host order
        this.valueAreaStart = Math.toIntExact(layout.slotAreaBytes());
        if (this.table.capacity() < layout.slotAreaBytes() + layout.valueAreaBytes()) {
            throw new IllegalArgumentException("table buffer of " + this.table.capacity() + " bytes is smaller than "
                    + "its layout");
        }
        for (int i = 0; i < freeBlocks.length; i++) {
            freeBlocks[i] = new ArrayDeque<>();
        }
    }

    KvLayout layout() {
        return layout;
    }

    /** Checks a key's and a value's size the way the client does; throws the typed error. */
    void checkSizes(byte[] key, long valueLength) {
        checkKey(key, layout.keyMaxBytes());
        if (valueLength > layout.maxValueBytes()) {
            throw new KvException(KvException.Reason.VALUE_TOO_LARGE, "a " + valueLength + "-byte value exceeds the "
                    + "largest value, " + layout.maxValueBytes() + " bytes");
        }
    }

    static void checkKey(byte[] key, int keyMaxBytes) {
        if (key.length == 0 || key.length > keyMaxBytes) {
            throw new KvException(KvException.Reason.KEY_TOO_LONG, "a key must have 1.." + keyMaxBytes
                    + " UTF-8 bytes, got " + key.length);
        }
    }

    /** Stores {@code value} under {@code key} (inline when it fits in the slot, else in a fresh block). */
    synchronized void put(byte[] key, byte[] value) {
        checkSizes(key, value.length);
        if (value.length <= layout.inlineMaxBytes()) {
            publish(key, value.length, 0, value);
            return;
        }
        long offset = allocate(value.length);
        try {
            // This block may have been freed by an earlier PUT just now: its slot's new version must be
            // visible before the block's new bytes are (see the class comment).
            VarHandle.storeStoreFence();
            table.put(Math.toIntExact(valueAreaStart + offset), value);
        } catch (RuntimeException e) {
            free(offset, value.length);
            throw e;
        }
        publishBlock(key, value.length, offset);
    }

    /**
     * A fresh block for a value of {@code length} bytes that the caller fills (the server RDMA READs it from
     * the client), then {@link #publishBlock publishes} or {@link #free frees}. Returns its offset in the
     * value area.
     */
    synchronized long reserve(byte[] key, int length) {
        checkSizes(key, length);
        if (length <= layout.inlineMaxBytes()) {
            throw new IllegalArgumentException("a " + length + "-byte value goes inline, not in a block");
        }
        long offset = allocate(length);
        VarHandle.storeStoreFence(); // as in put: nothing lands in the block before its old slot moved on
        return offset;
    }

    /** Offset in the table of value-area offset {@code offset}: where a reserved block's bytes go. */
    int tableOffset(long valueOffset) {
        return Math.toIntExact(valueAreaStart + valueOffset);
    }

    /** Points {@code key}'s slot at a filled block; frees the block and throws when no slot is free. */
    synchronized void publishBlock(byte[] key, int length, long offset) {
        try {
            publish(key, length, offset, null);
        } catch (RuntimeException e) {
            free(offset, length);
            throw e;
        }
    }

    /** Removes {@code key}; true when it had a value. */
    synchronized boolean delete(byte[] key) {
        checkKey(key, layout.keyMaxBytes());
        int slot = find(key).live;
        if (slot < 0) {
            return false;
        }
        int at = slotOffset(slot);
        int oldLength = table.getInt(at + SlotCodec.VALUE_LENGTH);
        long oldOffset = table.getLong(at + SlotCodec.VALUE_OFFSET);
        SlotCodec.write(table, at, layout.slotSize(), layout.keyMaxBytes(), SlotCodec.TOMBSTONE, new byte[0], 0,
                0, null);
        liveEntries--;
        if (oldLength > layout.inlineMaxBytes()) {
            freePublished(oldOffset, oldLength);
        }
        return true;
    }

    /** The index of the named counter's word, created (at 0) when it is new. */
    synchronized int counter(byte[] name) {
        checkKey(name, layout.keyMaxBytes());
        String n = new String(name, java.nio.charset.StandardCharsets.UTF_8);
        Integer index = counterIndex.get(n);
        if (index == null) {
            if (counterIndex.size() >= layout.counterCount()) {
                throw new KvException(KvException.Reason.COUNTERS_FULL, "all " + layout.counterCount()
                        + " counters are taken; no room for '" + n + "'");
            }
            index = counterIndex.size();
            counterIndex.put(n, index);
        }
        return index;
    }

    /** The named counter's value as the server sees it, or null when there is no such counter. */
    synchronized Long counterValue(String name) {
        Integer index = counterIndex.get(name);
        // Clients change the word with remote atomics: read it as a volatile long in host order.
        return index == null ? null : (long) COUNTER_WORDS.getVolatile(counters, index * 8);
    }

    synchronized int liveEntries() {
        return liveEntries;
    }

    /** Bytes of the value area taken by live values' blocks. */
    synchronized long valueBytesInUse() {
        return valueBytesInUse;
    }

    // ------------------------------------------------------------------------------------------ slots

    private record Probe(int live, int free) {
    }

    /** The slot holding {@code key} live, and the first slot a new entry could take (-1 when none). */
    private Probe find(byte[] key) {
        int free = -1;
        int slot = layout.homeSlot(key);
        for (int i = 0; i < layout.maxProbe(); i++, slot = (slot + 1) % layout.slotCount()) {
            int at = slotOffset(slot);
            byte state = table.get(at + SlotCodec.STATE);
            if (state == SlotCodec.LIVE && keyEquals(at, key)) {
                return new Probe(slot, free);
            }
            if (state != SlotCodec.LIVE && free < 0) {
                free = slot;
            }
            if (state == SlotCodec.EMPTY) {
                break; // nobody probed past an empty slot: the key is not further on
            }
        }
        return new Probe(-1, free);
    }

    private boolean keyEquals(int at, byte[] key) {
        if (Short.toUnsignedInt(table.getShort(at + SlotCodec.KEY_LENGTH)) != key.length) {
            return false;
        }
        return table.slice(at + SlotCodec.KEY, key.length).equals(ByteBuffer.wrap(key));
    }

    private void publish(byte[] key, int length, long offset, byte[] inlineValue) {
        Probe p = find(key);
        int slot = p.live >= 0 ? p.live : p.free;
        if (slot < 0) {
            throw new KvException(KvException.Reason.TABLE_FULL, "no free slot among the " + layout.maxProbe()
                    + " slots of the key's probe window (" + liveEntries + " live entries in " + layout.slotCount()
                    + " slots)");
        }
        int at = slotOffset(slot);
        int oldLength = -1;
        long oldOffset = 0;
        if (p.live >= 0) {
            oldLength = table.getInt(at + SlotCodec.VALUE_LENGTH);
            oldOffset = table.getLong(at + SlotCodec.VALUE_OFFSET);
        } else {
            liveEntries++;
        }
        SlotCodec.write(table, at, layout.slotSize(), layout.keyMaxBytes(), SlotCodec.LIVE, key, length, offset,
                inlineValue);
        if (inlineValue == null) {
            valueBytesInUse += blockSize(length);
        }
        if (oldLength > layout.inlineMaxBytes()) {
            freePublished(oldOffset, oldLength); // only now: the slot no longer points at it
        }
    }

    private int slotOffset(int slot) {
        return Math.toIntExact(layout.slotOffset(slot));
    }

    // ------------------------------------------------------------------------------------- value area

    static long blockSize(long length) {
        return Math.max(MIN_BLOCK_BYTES, Long.highestOneBit(Math.max(1, length - 1)) << 1);
    }

    private static int sizeClass(long length) {
        return Long.numberOfTrailingZeros(blockSize(length));
    }

    private long allocate(int length) {
        long size = blockSize(length);
        Long reused = freeBlocks[sizeClass(length)].pollFirst();
        if (reused != null) {
            return reused;
        }
        if (bumpOffset + size > layout.valueAreaBytes()) {
            throw new KvException(KvException.Reason.VALUE_AREA_FULL, "no free " + size + "-byte block for a "
                    + length + "-byte value (" + valueBytesInUse + " of " + layout.valueAreaBytes()
                    + " value-area bytes in use)");
        }
        long offset = bumpOffset;
        bumpOffset += size;
        return offset;
    }

    /** Returns a block (reserved, or no longer pointed at) to its size class, behind every earlier one. */
    synchronized void free(long offset, int length) {
        freeBlocks[sizeClass(length)].addLast(offset);
    }

    /** Called when a published block is freed: the bytes it held are no longer in use. */
    private void freePublished(long offset, int length) {
        valueBytesInUse -= blockSize(length);
        free(offset, length);
    }
}
