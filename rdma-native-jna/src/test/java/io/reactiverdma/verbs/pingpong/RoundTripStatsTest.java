package io.reactiverdma.verbs.pingpong;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoundTripStatsTest {
    @Test
    void percentilesByNearestRank() {
        RoundTripStats stats = new RoundTripStats(100);
        for (int i = 100; i >= 1; i--) {
            stats.record(i * 1000L);
        }
        assertEquals(100, stats.count());
        assertEquals(1000, stats.minNs());
        assertEquals(50_000, stats.percentileNs(50));
        assertEquals(99_000, stats.percentileNs(99));
        assertEquals(100_000, stats.maxNs());
        assertEquals(50_500, stats.meanNs(), 1e-9);
        assertTrue(stats.summary().startsWith("100 round trips: min 1.0 us, median 50.0 us"), stats.summary());
    }

    @Test
    void rejectsBadUse() {
        RoundTripStats stats = new RoundTripStats(1);
        assertThrows(IllegalStateException.class, stats::minNs);
        stats.record(5);
        assertThrows(IllegalStateException.class, () -> stats.record(6));
        assertThrows(IllegalArgumentException.class, () -> stats.percentileNs(0));
        assertThrows(IllegalArgumentException.class, () -> new RoundTripStats(0));
    }
}
