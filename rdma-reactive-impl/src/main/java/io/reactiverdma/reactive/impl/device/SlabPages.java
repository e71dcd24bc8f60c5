package io.reactiverdma.reactive.impl.device;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;
import io.reactiverdma.reactive.impl.support.EngineLog;

import java.nio.ByteBuffer;

/**
 * Gives a deregistered slab's pages back to the kernel with {@code madvise(MADV_DONTNEED)}: the resident
 * memory drops at once, the virtual range stays (and reads as zeros), and the pool reuses the buffer for its
 * next slab. Freeing the direct buffer instead would wait for the GC, which on a quiet heap may never come.
 * Only the whole pages inside the buffer are discarded, never the allocator's bytes around it.
 */
final class SlabPages implements BufferPool.Pages {
    static final SlabPages INSTANCE = new SlabPages();
    private static final int MADV_DONTNEED = 4;
    private static final int SC_PAGESIZE = 30;
    private static final long PAGE;

    static {
        long page = 0;
        try {
            Native.register(SlabPages.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            page = sysconf(SC_PAGESIZE);
        } catch (Throwable e) {
            EngineLog.debug("madvise unavailable (" + e + "): released slabs keep their pages until the GC frees them");
        }
        PAGE = page > 0 && Long.bitCount(page) == 1 ? page : 0;
    }

    private static native int madvise(long address, long length, int advice);

    private static native long sysconf(int name);

    private SlabPages() {
    }

    @Override
    public void discard(ByteBuffer memory) {
        if (PAGE == 0 || !Platform.isLinux()) {
            return;
        }
        long base = Pointer.nativeValue(Native.getDirectBufferPointer(memory));
        long start = (base + PAGE - 1) & -PAGE;
        long end = (base + memory.capacity()) & -PAGE;
        if (end > start && madvise(start, end - start, MADV_DONTNEED) != 0) {
            EngineLog.debug("madvise(MADV_DONTNEED) of a released slab failed: errno " + Native.getLastError());
        }
    }
}
