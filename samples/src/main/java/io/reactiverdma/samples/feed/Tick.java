package io.reactiverdma.samples.feed;

import java.nio.ByteBuffer;

/**
 * One market-data update on the wire (big-endian): a magic number ({@link #MAGIC}, "TICK"), the run id of the
 * publisher that sent it (8 bytes), sequence number (8), instrument id (4), price in millionths (8), padding up
 * to the configured message size.
 *
 * <p>A multicast group is open to every member of the fabric, so a subscriber cannot trust what arrives on
 * it: the magic number tells this feed's datagrams from others, the run id tells this run's ticks from those
 * of another feed on the same group (a stale sequence number from another run would otherwise count as loss).
 */
public record Tick(long sequence, int instrument, long priceMicros) {
    /** "TICK" in ASCII. */
    public static final int MAGIC = 0x5449434B;
    /** Bytes the header and fields take: the smallest message. */
    public static final int SIZE = 32;

    /** The tick of run {@code run} as a {@code size}-byte message (at least {@link #SIZE}). */
    public ByteBuffer encode(long run, int size) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(SIZE, size));
        b.putInt(MAGIC).putLong(run).putLong(sequence).putInt(instrument).putLong(priceMicros);
        return b.clear();
    }

    /**
     * Why {@code b} is not a tick of run {@code run}, or null when it is one. Allocates nothing, so a flood of
     * foreign datagrams costs the receiving thread no garbage. Does not move {@code b}.
     */
    public static String refusal(ByteBuffer b, long run) {
        if (b.remaining() < SIZE) {
            return "shorter than a tick's " + SIZE + " bytes";
        }
        int p = b.position();
        if (b.getInt(p) != MAGIC) {
            return "no tick magic number";
        }
        if (b.getLong(p + 4) != run) {
            return "a tick of another run";
        }
        if (b.getLong(p + 12) < 0) {
            return "a negative sequence number";
        }
        return null;
    }

    /** The sequence number of a message {@link #refusal} accepted. */
    static long sequenceOf(ByteBuffer b) {
        return b.getLong(b.position() + 12);
    }

    /**
     * Reads a tick of run {@code run} without moving {@code b}.
     *
     * @throws NotATickException when {@code b} is anything else (see {@link #refusal})
     */
    public static Tick decode(ByteBuffer b, long run) {
        String why = refusal(b, run);
        if (why != null) {
            throw new NotATickException("not a tick of run " + Long.toHexString(run) + ": " + why + " ("
                    + b.remaining() + " bytes)");
        }
        int p = b.position();
        return new Tick(b.getLong(p + 12), b.getInt(p + 20), b.getLong(p + 24));
    }
}
