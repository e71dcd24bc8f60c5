package io.reactiverdma.cm;

import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Direct buffers in native order, and views of native memory, for the cm structs. */
final class NativeMemory {
    private NativeMemory() {
    }

    static ByteBuffer allocate(int size) {
        return ByteBuffer.allocateDirect(size).order(ByteOrder.nativeOrder());
    }

    static long address(ByteBuffer direct) {
        return Pointer.nativeValue(Native.getDirectBufferPointer(direct));
    }

    /** A view of {@code size} bytes of native memory at {@code address} (no copy). */
    static ByteBuffer view(long address, int size) {
        return new Pointer(address).getByteBuffer(0, size).order(ByteOrder.nativeOrder());
    }

    /** A copy of {@code length} bytes at {@code address} (empty when the pointer is NULL). */
    static byte[] copy(long address, int length) {
        if (address == 0 || length <= 0) {
            return new byte[0];
        }
        return new Pointer(address).getByteArray(0, length);
    }
}
