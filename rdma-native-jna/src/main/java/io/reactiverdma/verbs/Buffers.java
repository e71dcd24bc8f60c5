package io.reactiverdma.verbs;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Direct, native-order byte buffers as the backing store of every struct this package passes to C. */
final class Buffers {
    private Buffers() {
    }

    /** A zeroed direct buffer in native byte order. */
    static ByteBuffer allocate(int size) {
        return ByteBuffer.allocateDirect(Math.max(size, 8)).order(ByteOrder.nativeOrder());
    }

    /** Address of element 0 of a direct buffer (not of its position). */
    static long address(ByteBuffer buffer) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("buffer must be a direct ByteBuffer");
        }
        return Pointer.nativeValue(Native.getDirectBufferPointer(buffer));
    }

    /** Zeroes {@code length} bytes from {@code offset}. */
    static void zero(ByteBuffer b, int offset, int length) {
        int end = offset + length;
        int i = offset;
        for (; i + 8 <= end; i += 8) {
            b.putLong(i, 0L);
        }
        for (; i < end; i++) {
            b.put(i, (byte) 0);
        }
    }

    /** A NUL-terminated C string of at most {@code max} bytes at {@code offset}. */
    static String cString(ByteBuffer b, int offset, int max) {
        int n = 0;
        while (n < max && b.get(offset + n) != 0) {
            n++;
        }
        byte[] bytes = new byte[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = b.get(offset + i);
        }
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    /** A big-endian (network order, {@code __be64}) long at {@code offset} of a native-order buffer. */
    static long getLongBE(ByteBuffer b, int offset) {
        long v = b.getLong(offset);
        return LITTLE ? Long.reverseBytes(v) : v;
    }

    /** A big-endian ({@code __be32}) int at {@code offset} of a native-order buffer. */
    static int getIntBE(ByteBuffer b, int offset) {
        int v = b.getInt(offset);
        return LITTLE ? Integer.reverseBytes(v) : v;
    }

    static void putIntBE(ByteBuffer b, int offset, int value) {
        b.putInt(offset, LITTLE ? Integer.reverseBytes(value) : value);
    }

    /** A big-endian ({@code __be16}) unsigned short at {@code offset} of a native-order buffer. */
    static int getShortBE(ByteBuffer b, int offset) {
        short v = b.getShort(offset);
        return Short.toUnsignedInt(LITTLE ? Short.reverseBytes(v) : v);
    }

    /** Network order to host order for a {@code __be64} returned in a register. */
    static long be64ToHost(long v) {
        return LITTLE ? Long.reverseBytes(v) : v;
    }

    static Pointer pointer(long address) {
        return address == 0 ? null : new Pointer(address);
    }
}
