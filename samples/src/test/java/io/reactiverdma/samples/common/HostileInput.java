package io.reactiverdma.samples.common;

import java.nio.ByteBuffer;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The contract every wire decoder keeps against any input, checked by the fuzzers: it returns a message or
 * throws its one typed exception with a message, never anything else, and allocates no more than a small
 * multiple of the bytes that actually arrived (a length field cannot make it allocate more).
 */
public final class HostileInput {
    /** Fixed costs: the duplicate buffer, records, an exception and its stack trace. */
    private static final long OVERHEAD_BYTES = 64 * 1024;

    private HostileInput() {
    }

    /** Decodes {@code bytes}; returns the decoded value, or null when it was refused as it must be. */
    public static <T> T decodeOrRefuse(byte[] bytes, Function<ByteBuffer, T> decoder,
                                       Class<? extends RuntimeException> refusal) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        Object[] result = new Object[1];
        // Once unmeasured: the first run of a code path links its string concatenations and loads classes,
        // which allocates whatever the input; what a length field makes it allocate happens every time.
        try {
            decoder.apply(ByteBuffer.wrap(bytes));
        } catch (RuntimeException e) {
            // checked below
        }
        long allocated = Allocation.bytesAllocatedBy(() -> {
            try {
                result[0] = decoder.apply(in);
            } catch (RuntimeException e) {
                result[0] = e;
            }
        });
        assertTrue(allocated <= 4L * bytes.length + OVERHEAD_BYTES,
                "decoding " + bytes.length + " bytes allocated " + allocated + " bytes");
        assertTrue(in.position() == 0 && in.limit() == bytes.length, "the decoder moved the caller's buffer");
        if (result[0] instanceof RuntimeException e) {
            if (!refusal.isInstance(e)) {
                fail("decoding " + bytes.length + " bytes threw " + e + " instead of " + refusal.getSimpleName(), e);
            }
            assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a refusal without a message: " + e);
            return null;
        }
        @SuppressWarnings("unchecked")
        T decoded = (T) result[0];
        return decoded;
    }

    /** {@code bytes} with the big-endian int at {@code offset} (when it fits) replaced by {@code value}. */
    public static byte[] withInt(byte[] bytes, int offset, int value) {
        byte[] copy = bytes.clone();
        if (offset >= 0 && offset + 4 <= copy.length) {
            ByteBuffer.wrap(copy).putInt(offset, value);
        }
        return copy;
    }

    /** {@code bytes} with the big-endian short at {@code offset} (when it fits) replaced by {@code value}. */
    public static byte[] withShort(byte[] bytes, int offset, short value) {
        byte[] copy = bytes.clone();
        if (offset >= 0 && offset + 2 <= copy.length) {
            ByteBuffer.wrap(copy).putShort(offset, value);
        }
        return copy;
    }

    /** The first {@code length} bytes (at most all of them). */
    public static byte[] truncated(byte[] bytes, int length) {
        return java.util.Arrays.copyOf(bytes, Math.min(Math.max(length, 0), bytes.length));
    }

    public static byte[] toArray(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }
}
