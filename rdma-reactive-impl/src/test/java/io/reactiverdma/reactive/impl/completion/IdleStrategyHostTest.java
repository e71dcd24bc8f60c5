package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.impl.completion.IdleStrategy.Backoff;
import io.reactiverdma.reactive.impl.completion.IdleStrategy.Backoff.State;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Busy-spin and spin-yield-park backoff, and how the configuration maps onto them. */
class IdleStrategyHostTest {

    /** The state after each of {@code calls} idle(0) calls (and the park period then, in PARKING). */
    private static List<String> trace(Backoff b, int calls) {
        List<String> steps = new ArrayList<>();
        for (int i = 0; i < calls; i++) {
            b.idle(0);
            steps.add(b.state() == State.PARKING ? "PARKING@" + b.parkPeriodNs() : b.state().name());
        }
        return steps;
    }

    @Test
    void configurationSelectsTheStrategy() {
        assertInstanceOf(IdleStrategy.BusySpin.class, IdleStrategy.of(PollerIdleStrategy.busySpin()));
        assertInstanceOf(Backoff.class, IdleStrategy.of(PollerIdleStrategy.backoff()));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.of(PollerIdleStrategy.eventDriven()),
                "event-driven idling belongs to the poller");
    }

    @Test
    void configuredBackoffParametersAreUsed() {
        Backoff b = (Backoff) IdleStrategy.of(PollerIdleStrategy.backoff(2, 1, 1_000, 3_000));
        assertEquals(State.NOT_IDLE, b.state());
        // 1 + 2 spins, 1 yield, the step into parking, then parks at 1000, 2000, capped 3000.
        assertEquals(List.of("SPINNING", "SPINNING", "YIELDING", "YIELDING", "PARKING@1000", "PARKING@2000",
                "PARKING@3000", "PARKING@3000"), trace(b, 8));
    }

    @Test
    void backoffSpinsThenYieldsThenParksWithGrowingPeriodsUpToTheMaximum() {
        Backoff b = new Backoff(3, 2, 1_000, 8_000);
        List<String> expected = List.of(
                "SPINNING", "SPINNING", "SPINNING", // the first idle starts spinning; spins 2 and 3 stay
                "YIELDING",                         // spin 4 exceeds maxSpins = 3
                "YIELDING", "YIELDING",             // yields 1 and 2
                "PARKING@1000",                     // yield 3 exceeds maxYields = 2: park from the minimum
                "PARKING@2000", "PARKING@4000", "PARKING@8000", // each park doubles the next
                "PARKING@8000", "PARKING@8000");    // capped at the maximum
        assertEquals(expected, trace(b, expected.size()));
    }

    @Test
    void workResetsToTheFirstStep() {
        Backoff b = new Backoff(1, 1, 1_000, 4_000);
        trace(b, 8);
        assertEquals(State.PARKING, b.state());
        assertEquals(4_000, b.parkPeriodNs());

        b.idle(1);
        assertEquals(State.NOT_IDLE, b.state(), "idle(workCount > 0) resets");
        assertEquals(1_000, b.parkPeriodNs(), "park period back to the minimum");
        // The whole sequence starts again, from spinning.
        assertEquals(List.of("SPINNING", "YIELDING", "YIELDING", "PARKING@1000", "PARKING@2000", "PARKING@4000"),
                trace(b, 6));

        b.idle(42);
        assertEquals(State.NOT_IDLE, b.state());
        trace(b, 3);
        b.reset();
        assertEquals(State.NOT_IDLE, b.state(), "reset() is the same as work");
        assertEquals(1_000, b.parkPeriodNs());
        assertEquals(List.of("SPINNING", "YIELDING", "YIELDING"), trace(b, 3));
    }

    @Test
    void zeroSpinsAndYieldsGoStraightToParking() {
        Backoff b = new Backoff(0, 0, 500, 500);
        assertEquals(List.of("SPINNING", "YIELDING", "PARKING@500", "PARKING@500"), trace(b, 4));
    }

    @Test
    void negativeWorkCountIsNoWork() {
        Backoff b = new Backoff(0, 0, 500, 1_000);
        b.idle(-1);
        b.idle(-1);
        assertEquals(State.YIELDING, b.state());
    }

    @Test
    void busySpinNeverBlocks() {
        IdleStrategy s = IdleStrategy.of(PollerIdleStrategy.busySpin());
        long start = System.nanoTime();
        for (int i = 0; i < 100_000; i++) {
            s.idle(0);
            s.idle(1);
        }
        s.reset();
        // A generous bound: 100k onSpinWait calls take well under a second even on a loaded machine; a strategy
        // that parked per call (even 1 us, ~50 us with Linux timer slack) would not come close.
        long tookNs = System.nanoTime() - start;
        assertTrue(tookNs < 5_000_000_000L, "busy spin took " + tookNs + " ns for 100k idles");
    }
}
