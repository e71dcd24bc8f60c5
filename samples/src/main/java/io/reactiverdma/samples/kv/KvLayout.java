package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RemoteRegion;

import java.nio.ByteBuffer;
import java.nio.BufferUnderflowException;

/**
 * The shape of a server's table, which the server sends each client as the first message of a connection
 * (the handshake), and the address arithmetic both sides share.
 *
 * <p>Two registrations, each with the least remote access it needs:
 * <pre>
 *   table (REMOTE_READ only):  [ slot 0 | slot 1 | ... | slot slotCount-1 ][ value area: valueAreaBytes ]
 *   counters (REMOTE_ATOMIC):  [ word 0 | word 1 | ... | word counterCount-1 ]  8 bytes each, host order
 * </pre>
 * A key lives in one slot of its probe window: {@link #homeSlot} and the {@code maxProbe - 1} slots after it
 * (wrapping at the end of the table); a client that did not find it there knows it is absent. See
 * {@link SlotCodec} for a slot's bytes.
 *
 * @param slotCount      slots in the table
 * @param slotSize       bytes per slot (a multiple of 8)
 * @param keyMaxBytes    the longest key, in UTF-8 bytes
 * @param maxProbe       slots a key may be placed in, from its home slot on (1..slotCount)
 * @param maxValueBytes  the largest value a PUT accepts
 * @param valueAreaBytes bytes of the value area, after the slots, for values that do not fit in a slot
 * @param counterCount   counter words
 * @param table          the slots and value area as the client reads them
 * @param counters       the counter words
 */
public record KvLayout(int slotCount, int slotSize, int keyMaxBytes, int maxProbe, int maxValueBytes,
                       long valueAreaBytes, int counterCount, RemoteRegion table, RemoteRegion counters) {
    /** "RKV1": the first four bytes of the handshake. */
    static final int MAGIC = 0x524b5631;
    /** Bytes of the encoded handshake. */
    static final int ENCODED_SIZE = 4 + 4 * 5 + 8 + 4 + 2 * RemoteRegion.ENCODED_SIZE;

    public KvLayout {
        if (slotCount < 1 || slotSize < SlotCodec.HEADER_BYTES + 8 || slotSize % 8 != 0
                || keyMaxBytes < 1 || keyMaxBytes > slotSize - SlotCodec.HEADER_BYTES
                || maxProbe < 1 || maxProbe > slotCount || maxValueBytes < 0 || valueAreaBytes < 0
                || counterCount < 0 || table == null || counters == null
                || table.length() < slotAreaBytes(slotCount, slotSize) + valueAreaBytes
                || counters.length() < 8L * counterCount) {
            throw new KvException(KvException.Reason.PROTOCOL, "inconsistent table layout: slots " + slotCount
                    + " x " + slotSize + " B, keys up to " + keyMaxBytes + " B, probe " + maxProbe
                    + ", values up to " + maxValueBytes + " B, value area " + valueAreaBytes + " B, "
                    + counterCount + " counters, table " + table + ", counters " + counters);
        }
    }

    private static long slotAreaBytes(int slotCount, int slotSize) {
        return (long) slotCount * slotSize;
    }

    /** Bytes of all slots: the value area starts here in the table. */
    public long slotAreaBytes() {
        return slotAreaBytes(slotCount, slotSize);
    }

    /** The largest value stored in the slot itself (one READ per GET); larger ones go to the value area. */
    public int inlineMaxBytes() {
        return slotSize - SlotCodec.HEADER_BYTES - keyMaxBytes;
    }

    /** Offset of slot {@code index} in the table. */
    public long slotOffset(int index) {
        return (long) index * slotSize;
    }

    /** The slot a key's probe starts at. */
    public int homeSlot(byte[] key) {
        return (int) Long.remainderUnsigned(keyHash(key), slotCount);
    }

    /** The remote region of {@code count} consecutive slots from {@code index}. */
    public RemoteRegion slots(int index, int count) {
        return table.slice(slotOffset(index), (long) count * slotSize);
    }

    /** The remote region of a value at {@code valueOffset} (relative to the value area) of {@code length} bytes. */
    public RemoteRegion value(long valueOffset, long length) {
        return table.slice(slotAreaBytes() + valueOffset, length);
    }

    /** The remote region of counter word {@code index}. */
    public RemoteRegion counter(int index) {
        return counters.slice(8L * index, 8);
    }

    /**
     * The stable hash of a key's UTF-8 bytes: 64-bit FNV-1a, then a final mix (the murmur3 finaliser) so
     * that keys differing only in their last bytes still spread over the table. Client and server must agree
     * on it across JVMs, so not {@code String.hashCode} (which is stable too, but only 32 bits and weak).
     */
    public static long keyHash(byte[] key) {
        long h = 0xcbf29ce484222325L;
        for (byte b : key) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    /** The handshake message. */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(ENCODED_SIZE);
        b.putInt(MAGIC).putInt(slotCount).putInt(slotSize).putInt(keyMaxBytes).putInt(maxProbe)
                .putInt(maxValueBytes).putLong(valueAreaBytes).putInt(counterCount);
        table.writeTo(b);
        counters.writeTo(b);
        return b.flip();
    }

    /**
     * Reads a handshake message.
     *
     * @throws KvException ({@link KvException.Reason#PROTOCOL}) when it is not one
     */
    public static KvLayout decode(ByteBuffer message) {
        ByteBuffer b = message.duplicate();
        if (b.remaining() != ENCODED_SIZE) {
            throw new KvException(KvException.Reason.PROTOCOL, "the handshake has " + ENCODED_SIZE
                    + " bytes, got " + b.remaining() + " (not a key-value server?)");
        }
        int magic = b.getInt();
        if (magic != MAGIC) {
            throw new KvException(KvException.Reason.PROTOCOL, String.format(
                    "the handshake starts with 0x%08x, not 0x%08x (not a key-value server?)", magic, MAGIC));
        }
        try {
            return new KvLayout(b.getInt(), b.getInt(), b.getInt(), b.getInt(), b.getInt(), b.getLong(),
                    b.getInt(), RemoteRegion.readFrom(b), RemoteRegion.readFrom(b));
        } catch (BufferUnderflowException | io.reactiverdma.reactive.InvalidRequestException e) {
            throw new KvException(KvException.Reason.PROTOCOL, "malformed handshake: " + e.getMessage());
        }
    }
}
