package io.reactiverdma.reactive.impl.completion;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The poller's intrusive hand-off queue: order, plain tasks, a task handed over again by itself. */
class HandOffQueueHostTest {

    @Test
    void tasksComeOutInTheOrderTheyWentInWhetherTheyAreTheirOwnNodesOrNot() {
        HandOffQueue q = new HandOffQueue();
        List<Runnable> in = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Runnable r = i % 2 == 0 ? new Task() : () -> { };
            in.add(r);
            q.offer(r);
            if (i == 4) {
                assertSame(in.get(0), q.poll(), "a poll between offers takes the oldest");
            }
        }
        assertTrue(!q.isEmpty());
        for (int i = 1; i < 10; i++) {
            assertSame(in.get(i), q.poll(), "task " + i);
        }
        assertNull(q.poll());
        assertTrue(q.isEmpty());
    }

    @Test
    void aTaskMayHandItselfOverAgainWhileItRuns() {
        HandOffQueue q = new HandOffQueue();
        Task other = new Task();
        int[] runs = new int[1];
        HandOffTask self = new HandOffTask() {
            @Override
            public void run() {
                if (++runs[0] < 3) {
                    q.offer(this);
                }
            }
        };
        q.offer(self);
        q.offer(other);
        Runnable r;
        List<Runnable> order = new ArrayList<>();
        while ((r = q.poll()) != null) {
            order.add(r);
            r.run();
        }
        assertEquals(List.of(self, other, self, self), order);
    }

    /** Four producers, one consumer: each producer's tasks in its order, none lost, none twice. */
    @Test
    void concurrentProducersKeepTheirOwnOrderAndLoseNothing() throws InterruptedException {
        HandOffQueue q = new HandOffQueue();
        int producers = 4;
        int each = 50_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    q.offer(new Numbered(producer, i));
                }
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        int[] next = new int[producers];
        int taken = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (taken < producers * each) {
            Runnable r = q.poll();
            if (r == null) {
                assertTrue(System.nanoTime() < deadline, "only " + taken + " tasks came out");
                Thread.onSpinWait();
                continue;
            }
            Numbered n = (Numbered) r;
            assertEquals(next[n.producer], n.index, "producer " + n.producer + "'s order");
            next[n.producer]++;
            taken++;
        }
        for (Thread t : threads) {
            t.join();
        }
        assertNull(q.poll());
    }

    private static class Task extends HandOffTask {
        @Override
        public void run() {
        }
    }

    private static final class Numbered extends Task {
        final int producer;
        final int index;

        Numbered(int producer, int index) {
            this.producer = producer;
            this.index = index;
        }
    }
}
