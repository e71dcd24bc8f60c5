package io.reactiverdma.reactive.impl.completion;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.function.Function;

import static io.reactiverdma.reactive.impl.completion.ModelChecks.INVOCATIONS;
import static io.reactiverdma.reactive.impl.completion.ModelChecks.assertFindsBug;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Model check (Lincheck, every interleaving up to its bound, sequential consistency) of the poller's task
 * hand-over, {@link TaskHandOff}, across the poller's end: two user threads hand tasks over while the poller
 * runs what it finds and then terminates. Every task runs exactly once, no two at the same time, and the
 * tasks of one thread in their order, whether the poller or a user thread (after the end) runs them. The
 * hand-over runs on the engine's own queue ({@link HandOffQueue}, checked on its own by
 * {@code HandOffQueueModelCheck}). Two broken variants, asserted to fail, keep the check honest: the poller's
 * last pass left out, and a queue whose push has no CAS.
 */
@Tag("model-check")
class TaskHandOffModelCheck {

    @BeforeEach
    void onlyWhereTheCheckerExplores() {
        ModelChecks.assumeCheckerExplores();
    }

    @Test
    void everyTaskHandedOverRunsExactlyOnceOneAtATimeInOrderAcrossThePollersEnd() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(name -> new TaskHandOff(name)));
    }

    /** Without the last pass under the lock, a task handed over just before the end is never run. */
    @Test
    void theCheckFindsATaskLostWhenThePollerEndsWithoutItsLastPass() {
        assertFindsBug(() -> scenario(name -> new TaskHandOff(name) {
            @Override
            void terminate() {
                runAll();
                terminated = true;
            }
        }));
    }

    /**
     * With a queue whose push loses one of two racing pushes, a task never runs: the check sees into the
     * queue the engine uses (it is not a model of it).
     */
    @Test
    void theCheckFindsATaskLostWhenTheQueuesPushHasNoCas() {
        assertFindsBug(() -> scenario(name -> new TaskHandOff(name, HandOffQueueModelCheck.pushWithoutCas())));
    }

    private static void scenario(Function<String, TaskHandOff> make) {
        TaskHandOff handOff = make.apply("model");
        Tasks tasks = new Tasks(3);
        Thread poller = new Thread(() -> {
            handOff.runAll();
            handOff.terminate();
        });
        Thread user1 = new Thread(() -> {
            handOff.offer(tasks.task(0));
            handOff.offer(tasks.task(1));
        });
        Thread user2 = new Thread(() -> handOff.offer(tasks.task(2)));
        ModelChecks.runAll(poller, user1, user2);
        assertEquals(0, tasks.overlaps, "tasks ran at the same time");
        assertEquals("1,1,1", tasks.runs(), "runs of each task");
        assertEquals(0, tasks.outOfOrder, "task 1 ran before task 0 (handed over in this order by one thread)");
    }

    /** Tasks that count their runs and notice one running while another runs (no synchronization of their own). */
    private static final class Tasks {
        final int[] runs;
        /** Volatile: each access is a point where the model checker may switch threads. */
        volatile boolean inside;
        volatile int overlaps;
        volatile int outOfOrder;

        Tasks(int n) {
            runs = new int[n];
        }

        Runnable task(int i) {
            return () -> {
                if (inside) {
                    overlaps++;
                }
                inside = true;
                if (i == 1 && runs[0] == 0) {
                    outOfOrder++;
                }
                runs[i]++;
                inside = false;
            };
        }

        String runs() {
            StringBuilder b = new StringBuilder();
            for (int r : runs) {
                b.append(b.length() == 0 ? "" : ",").append(r);
            }
            return b.toString();
        }
    }
}
