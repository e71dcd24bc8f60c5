package io.reactiverdma.samples.bulk;

import java.nio.ByteBuffer;

/**
 * A deterministic pseudo-random stream of any length, computed where it is read (no memory, no file): the
 * 8-byte word {@code i} is SplitMix64 of {@code i}, big-endian, so byte {@code p} depends only on {@code p},
 * never on how the stream is cut into chunks. Different offsets give different bytes, so a chunk written to
 * the wrong place changes the SHA-256.
 */
public final class GeneratedStream implements ChunkSource {
    private final long size;

    public GeneratedStream(long size) {
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        this.size = size;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public String describe() {
        return "generated stream";
    }

    /** The stream's 8-byte word {@code index} (bytes {@code 8 * index} to {@code 8 * index + 7}). */
    static long word(long index) {
        long z = (index + 1) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Byte {@code position} of the stream. */
    static byte byteAt(long position) {
        return (byte) (word(position >>> 3) >>> (56 - 8 * (int) (position & 7)));
    }

    @Override
    public void read(long offset, ByteBuffer dst) {
        if (offset < 0 || offset + dst.remaining() > size) {
            throw new IndexOutOfBoundsException("bytes " + offset + " + " + dst.remaining() + " outside the "
                    + size + "-byte stream");
        }
        long p = offset;
        int at = dst.position();
        int end = dst.limit();
        while (at < end && (p & 7) != 0) {                // up to the next word boundary
            dst.put(at++, byteAt(p++));
        }
        ByteBuffer bigEndian = dst.order() == java.nio.ByteOrder.BIG_ENDIAN ? dst
                : dst.duplicate().order(java.nio.ByteOrder.BIG_ENDIAN);
        while (end - at >= 8) {                           // whole words
            bigEndian.putLong(at, word(p >>> 3));
            at += 8;
            p += 8;
        }
        while (at < end) {                                // the tail
            dst.put(at++, byteAt(p++));
        }
        dst.position(end);
    }
}
