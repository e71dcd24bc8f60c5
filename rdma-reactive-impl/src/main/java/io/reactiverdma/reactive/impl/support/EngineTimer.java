package io.reactiverdma.reactive.impl.support;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own timer (connect timeouts, close watchdogs): one daemon thread that only hands tasks to the
 * engine's threads. Not a Reactor scheduler, which an application may dispose of.
 */
public final class EngineTimer {
    private static final ScheduledThreadPoolExecutor TIMER = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "rdma-engine-timer");
        t.setDaemon(true);
        return t;
    });

    static {
        // A cancelled timer (a connect that succeeded, a close that drained) leaves the queue at once: it would
        // otherwise keep its task, and so its connection, reachable until it would have fired.
        TIMER.setRemoveOnCancelPolicy(true);
    }

    private EngineTimer() {
    }

    /** For tests: whether {@code task} is still in the timer's queue (a cancelled one must not be). */
    public static boolean holds(ScheduledFuture<?> task) {
        return TIMER.getQueue().contains(task);
    }

    /** Runs {@code task} (which must only hand work over) every {@code period}, the first time after one. */
    public static ScheduledFuture<?> every(Runnable task, Duration period) {
        return TIMER.scheduleAtFixedRate(task, period.toNanos(), period.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Runs {@code task} (which must only hand work over) after {@code delay}. */
    public static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        return TIMER.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
}
