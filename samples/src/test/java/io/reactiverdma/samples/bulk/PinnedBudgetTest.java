package io.reactiverdma.samples.bulk;

import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PinnedBudgetTest {
    @Test
    void takesOnlyWhatFitsAndGetsItBack() {
        PinnedBudget b = new PinnedBudget(128);
        assertTrue(b.tryTake(64));
        assertTrue(b.tryTake(64));
        assertFalse(b.tryTake(1), "nothing fits in a full budget");
        assertEquals(128, b.taken());
        b.giveBack(64);
        assertTrue(b.tryTake(64));
    }

    @Test
    void concurrentSendersNeverPinMoreThanTheLimit() throws Exception {
        PinnedBudget b = new PinnedBudget(10 * 64);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Boolean>> takes = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                takes.add(pool.submit(() -> b.tryTake(64)));
            }
            int granted = 0;
            for (Future<Boolean> f : takes) {
                granted += f.get(10, TimeUnit.SECONDS) ? 1 : 0;
            }
            assertEquals(10, granted);
            assertEquals(640, b.taken());
        } finally {
            pool.shutdownNow();
        }
    }
}
