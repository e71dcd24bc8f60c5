package io.reactiverdma.reactive.impl.support;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own timer (connect timeouts, close watchdogs): one daemon thread that only hands tasks to the
 * engine's threads. Not a Reactor scheduler, which an application may dispose of.
 */
public final class EngineTimer {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rdma-engine-timer");
        t.setDaemon(true);
        return t;
    });

    private EngineTimer() {
    }

    /** Runs {@code task} (which must only hand work over) after {@code delay}. */
    public static ScheduledFuture<?> schedule(Runnable task, Duration delay) {
        return TIMER.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    }
}
