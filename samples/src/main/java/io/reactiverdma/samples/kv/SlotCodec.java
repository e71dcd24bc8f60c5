package io.reactiverdma.samples.kv;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * The bytes of one slot, and how the server writes it and a client checks what it read.
 * <pre>
 *   offset  size  field
 *    0       8    version       seqlock: odd while the server writes the slot, +2 per write; 0: never written
 *    8       8    checksum      CRC32C (high 32 bits) and CRC32 (low 32 bits) of the version and of bytes
 *                               16 .. the end of the key, and of the inline value
 *   16       1    state         0 empty, 1 live, 2 deleted (a tombstone: probing goes on past it)
 *   17       1    (zero)
 *   18       2    key length    UTF-8 bytes
 *   20       4    value length
 *   24       8    value offset  of the value's block in the value area, when the value length exceeds the
 *                               inline maximum (the block: a generation word, then the value)
 *   32       8    generation    the block's generation word when the value was stored in it
 *   40       K    key           K = the layout's keyMaxBytes
 *   40+K     ..   inline value  up to slotSize - 40 - K bytes
 * </pre>
 * Big-endian throughout.
 *
 * <p>Why a checksum and not only the seqlock version: a client reads a slot with one RDMA READ, and nothing
 * says in which order the device copies its bytes (a NIC's DMA engine, or rxe's kernel memcpy, may read the
 * version before or after the bytes it guards). A version checked before and after the data only works when
 * the reader reads them in that order. The checksum covers the version and every byte that matters, so a
 * read that mixes two writes is rejected whatever the order of the copy, unless the mix happens to have the
 * same 64-bit checksum (the self-verifying approach of Pilaf, Mitchell et al., USENIX ATC 2013). The odd
 * version still rejects the common case, a read during a write, without computing anything.
 */
final class SlotCodec {
    static final int VERSION = 0;
    static final int CHECKSUM = 8;
    static final int STATE = 16;
    static final int KEY_LENGTH = 18;
    static final int VALUE_LENGTH = 20;
    static final int VALUE_OFFSET = 24;
    static final int BLOCK_GENERATION = 32;
    static final int KEY = 40;
    /** Bytes before the key. */
    static final int HEADER_BYTES = 40;

    static final byte EMPTY = 0;
    static final byte LIVE = 1;
    static final byte TOMBSTONE = 2;

    /** Aligned 8-byte access to the version word with memory-ordering modes, on heap or direct buffers. */
    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private SlotCodec() {
    }

    /** What a client made of one slot it read. */
    enum Check { VALID, TORN, UNCHECKED }

    /**
     * One decoded slot.
     *
     * @param check       whether it passed the checks
     * @param version     its version
     * @param state       {@link #EMPTY}, {@link #LIVE} or {@link #TOMBSTONE}
     * @param key         the key's UTF-8 bytes (empty unless live)
     * @param valueLength the value's length
     * @param valueOffset the value's block in the value area (out-of-line values only)
     * @param blockGeneration the block's generation when the value was stored in it (out-of-line values)
     * @param inlineValue the value when it is inline, else null
     */
    record Slot(Check check, long version, byte state, byte[] key, int valueLength, long valueOffset,
                long blockGeneration, byte[] inlineValue) {
        boolean holds(byte[] k) {
            return state == LIVE && Arrays.equals(key, k);
        }
    }

    /**
     * Writes a slot the way a seqlock writer does: version odd, then the fields, then the new even version
     * with release semantics; returns the new version. Only one thread may write slots of a table at a time
     * (the caller's lock).
     *
     * @param inlineValue the value when {@code valueLength <= inlineMaxBytes}, else null (then the value is
     *                    at {@code valueOffset} in the value area, written before this call)
     */
    static long write(ByteBuffer table, int slotOffset, int slotSize, int keyMaxBytes, byte state, byte[] key,
            int valueLength, long valueOffset, long blockGeneration, byte[] inlineValue) {
        byte[] body = body(slotSize, keyMaxBytes, state, key, valueLength, valueOffset, blockGeneration,
                inlineValue);
        long old = (long) LONGS.getOpaque(table, slotOffset + VERSION);
        long next = old + 2 - (old & 1);
        LONGS.setOpaque(table, slotOffset + VERSION, next - 1);
        // The field stores below must not become visible before the odd version (setOpaque alone does not
        // order it against later plain stores).
        VarHandle.storeStoreFence();
        table.put(slotOffset + STATE, body, 0, body.length);
        LONGS.set(table, slotOffset + CHECKSUM, checksum(next, body, keyMaxBytes, key.length, inlineLength(inlineValue)));
        // Release: every store above is visible before the even version is.
        LONGS.setRelease(table, slotOffset + VERSION, next);
        return next;
    }

    /** The 8-byte word at {@code offset} (8-byte aligned), as its only writer sees it. */
    static long word(ByteBuffer table, int offset) {
        return (long) LONGS.getOpaque(table, offset);
    }

    /** Stores an 8-byte word with release semantics: every earlier store is visible before it. */
    static void setWordRelease(ByteBuffer table, int offset, long value) {
        LONGS.setRelease(table, offset, value);
    }

    /** Stores an 8-byte word, then fences: no later store becomes visible before it. */
    static void setWordThenFence(ByteBuffer table, int offset, long value) {
        LONGS.setOpaque(table, offset, value);
        VarHandle.storeStoreFence();
    }

    private static int inlineLength(byte[] inlineValue) {
        return inlineValue == null ? 0 : inlineValue.length;
    }

    /** Bytes 16 .. slot end (fields, key padded to keyMaxBytes, inline value). */
    private static byte[] body(int slotSize, int keyMaxBytes, byte state, byte[] key, int valueLength,
            long valueOffset, long blockGeneration, byte[] inlineValue) {
        int inline = inlineLength(inlineValue);
        if (key.length > keyMaxBytes || inline > slotSize - HEADER_BYTES - keyMaxBytes) {
            throw new IllegalArgumentException("key " + key.length + " B or inline value " + inline
                    + " B does not fit a " + slotSize + "-byte slot with " + keyMaxBytes + "-byte keys");
        }
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES - STATE + keyMaxBytes + inline);
        b.put(state).put((byte) 0).putShort((short) key.length).putInt(valueLength).putLong(valueOffset)
                .putLong(blockGeneration);
        b.put(key);
        b.position(HEADER_BYTES - STATE + keyMaxBytes);
        if (inlineValue != null) {
            b.put(inlineValue);
        }
        return b.array();
    }

    /** CRC32C and CRC32 of the version, the fields, the key and the inline value (not the padding). */
    private static long checksum(long version, byte[] body, int keyMaxBytes, int keyLength, int inlineLength) {
        ByteBuffer v = ByteBuffer.allocate(8).putLong(0, version);
        CRC32C c = new CRC32C();
        CRC32 d = new CRC32();
        int keyEnd = HEADER_BYTES - STATE + keyLength;
        int inlineStart = HEADER_BYTES - STATE + keyMaxBytes;
        c.update(v.array());
        c.update(body, 0, keyEnd);
        c.update(body, inlineStart, inlineLength);
        d.update(v.array());
        d.update(body, 0, keyEnd);
        d.update(body, inlineStart, inlineLength);
        return c.getValue() << 32 | d.getValue();
    }

    /**
     * Decodes the slot at {@code offset} of {@code read} (a copy the client READ). With {@code verify}, a
     * slot whose version is odd or whose checksum does not match is {@link Check#TORN}; a slot with version
     * 0 is empty (never written: the server's first write makes it odd before anything else). Without
     * {@code verify} (only to show what the checks prevent) the fields are taken as they are.
     */
    static Slot decode(ByteBuffer read, int offset, int slotSize, int keyMaxBytes, int inlineMaxBytes,
            boolean verify) {
        long version = read.getLong(offset + VERSION);
        if (version == 0 && verify) {
            return new Slot(Check.VALID, 0, EMPTY, new byte[0], 0, 0, 0, null);
        }
        Check check = verify ? Check.VALID : Check.UNCHECKED;
        if (verify && (version & 1) != 0) {
            return torn(version);
        }
        byte state = read.get(offset + STATE);
        int keyLength = Short.toUnsignedInt(read.getShort(offset + KEY_LENGTH));
        int valueLength = read.getInt(offset + VALUE_LENGTH);
        long valueOffset = read.getLong(offset + VALUE_OFFSET);
        long blockGeneration = read.getLong(offset + BLOCK_GENERATION);
        if (keyLength > keyMaxBytes || valueLength < 0 || state < EMPTY || state > TOMBSTONE) {
            // Garbage fields: only a torn (or unchecked) read gets here.
            return torn(version);
        }
        int inline = valueLength <= inlineMaxBytes ? valueLength : 0;
        if (verify) {
            byte[] body = new byte[HEADER_BYTES - STATE + keyMaxBytes + inline];
            read.get(offset + STATE, body);
            if (checksum(version, body, keyMaxBytes, keyLength, inline) != read.getLong(offset + CHECKSUM)) {
                return torn(version);
            }
        }
        byte[] key = new byte[keyLength];
        read.get(offset + KEY, key);
        byte[] inlineValue = null;
        if (valueLength <= inlineMaxBytes) {
            inlineValue = new byte[valueLength];
            read.get(offset + KEY + keyMaxBytes, inlineValue);
        }
        return new Slot(check, version, state, key, valueLength, valueOffset, blockGeneration, inlineValue);
    }

    private static Slot torn(long version) {
        return new Slot(Check.TORN, version, EMPTY, new byte[0], 0, 0, 0, null);
    }
}
