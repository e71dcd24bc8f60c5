package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.support.EngineLog;

import java.util.ArrayList;
import java.util.List;

/**
 * One run of a {@link BufferPool}'s idle-slab release, on the engine's timer: the slabs the pool gives up
 * (idle for its idle time, oldest first, while more than its idle bytes to keep are idle; at most
 * {@link BufferPool#MAX_RELEASED_PER_RUN}) are deregistered outside the pool's monitor (it unpins every page,
 * and pollers recycle under that monitor), their pages given back to the system, and their memory kept for the
 * next slabs; then the release comes back when the next idle slab will have been idle long enough.
 */
final class IdleSlabRelease {
    private final BufferPool pool;
    private final BufferPool.Pages pages;
    private final BufferPool.Timer timer;
    private final PoolMetrics metrics;

    IdleSlabRelease(BufferPool pool, BufferPool.Pages pages, BufferPool.Timer timer, PoolMetrics metrics) {
        this.pool = pool;
        this.pages = pages;
        this.timer = timer;
        this.metrics = metrics;
    }

    /** Called with the pool's deregistering lock held (so close waits for it). */
    void run() {
        List<Slab> toFree = new ArrayList<>();
        long again = pool.takeExpiredSlabs(toFree);
        int freed = 0;
        for (Slab s : toFree) {
            try {
                s.registration.deregister();
            } catch (RuntimeException e) {
                // Still pinned (and the device may still map it): keep it, and its buffer reachable, for close.
                EngineLog.error(pool.description() + ": deregistering an idle " + s.bytes() + "-byte slab failed", e);
                pool.keepSlab(s);
                continue;
            }
            freed++;
            // Unpinned now: give its pages back (the GC would free the buffer late or never) and keep the
            // memory for the next slab.
            try {
                pages.discard(s.memory);
            } catch (RuntimeException e) {
                EngineLog.error(pool.description() + ": giving a released slab's pages back failed", e);
            }
            pool.reuseMemory(s.memory);
        }
        if (freed > 0) {
            metrics.registered(-(long) freed * pool.maxAllocationSize());
            metrics.slabsReleased(freed);
        }
        if (again >= 0) {
            timer.schedule(pool::releaseIdle, again);
        }
    }
}
