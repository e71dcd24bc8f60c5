package io.reactiverdma.samples.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The server's side of the table: writes slots and values into the registered memory that clients READ,
 * and hands out counter words. Every method is {@code synchronized}: slots have a single writer at a time
 * (the seqlock needs that), and the work under the lock is a few memory copies, never I/O.
 *
 * <p>Values that do not fit in a slot go to the value area, in blocks of power-of-two size classes (64 B
 * up): an 8-byte generation word, then the value. A value is <b>never overwritten in place while a slot
 * points at it</b>: a PUT writes the new value into a fresh block, then publishes the slot, then frees the
 * old block. A freed block is reused (oldest first, a FIFO per size class) only after
 * {@code blockReuseDelayNs}, unless the area has no never-used space left; before the block's new bytes
 * are written its generation turns odd, and it turns even again (+2) once they are in. A client that read a
 * block's bytes checks afterwards that the generation is still the one the slot gave: if so, nobody wrote
 * the block meanwhile, whatever the order in which the device copied it. The delay only makes such
 * re-reads rare.
 */
final class KvTable {
    static final int MIN_BLOCK_BYTES = 64;
    /** Bytes before a block's value: its generation word. */
    static final int BLOCK_HEADER_BYTES = 8;
    private static final VarHandle COUNTER_WORDS =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final KvLayout layout;
    private final ByteBuffer table;
    private final ByteBuffer counters;
    private final int valueAreaStart;
    private final long blockReuseDelayNs;
    private final LongSupplier clockNs;
    /** Per size class: {offset, freed at (clockNs)} of freed blocks, oldest first. */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<long[]>[] freeBlocks = new ArrayDeque[40];
    private final Map<String, Integer> counterIndex = new HashMap<>();
    private long bumpOffset;
    private long valueBytesInUse;
    private int liveEntries;

    /**
     * @param table    the slots and value area, as {@code layout} describes (a view of registered memory)
     * @param counters the counter words
     */
    KvTable(KvLayout layout, ByteBuffer table, ByteBuffer counters, long blockReuseDelayNs, LongSupplier clockNs) {
        this.layout = layout;
        this.blockReuseDelayNs = blockReuseDelayNs;
        this.clockNs = clockNs;
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
            publish(key, value.length, 0, 0, value);
            return;
        }
        long offset = allocate(value.length);
        table.put(tableOffset(offset), value);
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
        return allocate(length);
    }

    /** Offset in the table of the value in the block at {@code blockOffset}: where its bytes go. */
    int tableOffset(long blockOffset) {
        return Math.toIntExact(valueAreaStart + blockOffset + BLOCK_HEADER_BYTES);
    }

    /**
     * Ends the write of a filled block (its generation turns even) and points {@code key}'s slot at it;
     * frees the block and throws when no slot is free.
     */
    synchronized void publishBlock(byte[] key, int length, long offset) {
        int header = Math.toIntExact(valueAreaStart + offset);
        long generation = SlotCodec.word(table, header) + 1;
        SlotCodec.setWordRelease(table, header, generation); // the value's bytes are visible before it
        try {
            publish(key, length, offset, generation, null);
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
                0, 0, null);
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

    private void publish(byte[] key, int length, long offset, long generation, byte[] inlineValue) {
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
                generation, inlineValue);
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

    /** The block for a value of {@code length} bytes: the generation word and the value, a power of two. */
    static long blockSize(long length) {
        long needed = length + BLOCK_HEADER_BYTES;
        return Math.max(MIN_BLOCK_BYTES, Long.highestOneBit(needed - 1) << 1);
    }

    private static int sizeClass(long length) {
        return Long.numberOfTrailingZeros(blockSize(length));
    }

    /**
     * A block for {@code length} bytes whose generation is odd (being written): a freed one whose reuse
     * delay passed, else never-used space, else the oldest freed one anyway.
     */
    private long allocate(int length) {
        long size = blockSize(length);
        ArrayDeque<long[]> free = freeBlocks[sizeClass(length)];
        long[] oldest = free.peekFirst();
        long offset;
        if (oldest != null && clockNs.getAsLong() - oldest[1] >= blockReuseDelayNs) {
            offset = free.pollFirst()[0];
        } else if (bumpOffset + size <= layout.valueAreaBytes()) {
            offset = bumpOffset;
            bumpOffset += size;
        } else if (oldest != null) {
            offset = free.pollFirst()[0];
        } else {
            throw new KvException(KvException.Reason.VALUE_AREA_FULL, "no free " + size + "-byte block for a "
                    + length + "-byte value (" + valueBytesInUse + " of " + layout.valueAreaBytes()
                    + " value-area bytes in use)");
        }
        int header = Math.toIntExact(valueAreaStart + offset);
        long generation = SlotCodec.word(table, header);
        // Odd before any of the block's new bytes can land (our stores, or the device's for a READ the
        // caller posts later): a reader still reading the old value sees the change when it re-checks.
        SlotCodec.setWordThenFence(table, header, generation + 1 + (generation & 1));
        return offset;
    }

    /** Returns a block (reserved, or no longer pointed at) to its size class, behind every earlier one. */
    synchronized void free(long offset, int length) {
        freeBlocks[sizeClass(length)].addLast(new long[] {offset, clockNs.getAsLong()});
    }

    /** Called when a published block is freed: the bytes it held are no longer in use. */
    private void freePublished(long offset, int length) {
        valueBytesInUse -= blockSize(length);
        free(offset, length);
    }
}
