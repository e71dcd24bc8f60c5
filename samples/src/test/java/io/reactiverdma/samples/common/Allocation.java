package io.reactiverdma.samples.common;

import java.lang.management.ManagementFactory;

/**
 * Bytes the current thread allocates on the heap while running something: how the hostile-input tests
 * show a decoder refused a message before allocating what its length fields ask for.
 */
public final class Allocation {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private Allocation() {
    }

    /** Heap bytes allocated by this thread while {@code r} ran (whether it returned or threw). */
    public static long bytesAllocatedBy(Runnable r) {
        long id = Thread.currentThread().getId();
        long before = THREADS.getThreadAllocatedBytes(id);
        try {
            r.run();
        } catch (RuntimeException e) {
            // the caller checks the outcome separately; only the allocation is measured here
        }
        return THREADS.getThreadAllocatedBytes(id) - before;
    }
}
