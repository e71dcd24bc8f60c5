package io.reactiverdma.reactive.impl.support;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The engine's timer forgets a cancelled task at once (the review's "also noticed": without
 * {@code removeOnCancel} every cancelled connect, accept or drain timer kept its connection reachable until
 * it would have fired).
 */
class EngineTimerHostTest {
    @Test
    void aCancelledTaskLeavesTheTimerAtOnce() {
        List<ScheduledFuture<?>> timers = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            timers.add(EngineTimer.schedule(() -> { }, Duration.ofHours(1)));
        }
        assertEquals(1_000, timers.stream().filter(EngineTimer::holds).count());
        timers.forEach(t -> t.cancel(false));
        assertEquals(0, timers.stream().filter(EngineTimer::holds).count(), "cancelled tasks still queued");
    }
}
