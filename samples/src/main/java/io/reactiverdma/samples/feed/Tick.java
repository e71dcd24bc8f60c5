package io.reactiverdma.samples.feed;

import java.nio.ByteBuffer;

/**
 * One market-data update on the wire (big-endian): sequence number (8 bytes), instrument id (4), price in
 * millionths (8), padding up to the configured message size.
 */
public record Tick(long sequence, int instrument, long priceMicros) {
    /** Bytes the fields take: the smallest message. */
    public static final int SIZE = 20;

    /** The tick as a {@code size}-byte message. */
    public ByteBuffer encode(int size) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(SIZE, size));
        b.putLong(sequence).putInt(instrument).putLong(priceMicros);
        return b.clear();
    }

    /** Reads a tick; a message shorter than {@link #SIZE} (not this feed's) is refused. */
    public static Tick decode(ByteBuffer b) {
        if (b.remaining() < SIZE) {
            throw new IllegalArgumentException("a tick has " + SIZE + " bytes, got " + b.remaining());
        }
        int p = b.position();
        return new Tick(b.getLong(p), b.getInt(p + 8), b.getLong(p + 12));
    }
}
