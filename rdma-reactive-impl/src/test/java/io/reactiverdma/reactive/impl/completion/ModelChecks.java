package io.reactiverdma.reactive.impl.completion;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.Assumptions;

import java.util.concurrent.Executor;

import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What the engine's model checks share (docs/threading-model.md, "What is model-checked"): Lincheck's
 * bounded model checking of a block of concurrent code, and the assertion that a deliberately broken
 * variant of the protocol fails the same check (a check that cannot fail proves nothing).
 */
public final class ModelChecks {
    /**
     * Interleavings explored per check, or per generated scenario of a data-structure check such as
     * {@code HandOffQueueModelCheck} (Lincheck's default is 10,000; these scenarios are small and the host
     * build must stay quick). The build sets it from {@code -Dmodel-check.invocations}.
     */
    public static final int INVOCATIONS = Integer.getInteger("reactiverdma.modelcheck.invocations", 300);

    private static Boolean explores;

    private ModelChecks() {
    }

    /**
     * Whether Lincheck controls the threads on this JDK: it must find the lost update of two unsynchronized
     * increments. Lincheck 3.7 does on JDK 17; on JDK 25 it lets the threads run unchecked and finds nothing
     * (not even this), so there the checks would pass without checking anything: they are skipped instead.
     */
    public static synchronized boolean checkerExplores() {
        if (explores == null) {
            boolean found;
            try {
                Lincheck.runConcurrentTest(INVOCATIONS, () -> {
                    int[] counter = new int[1];
                    runAll(new Thread(() -> counter[0]++), new Thread(() -> counter[0]++));
                    if (counter[0] != 2) {
                        throw new AssertionError("lost update: " + counter[0]);
                    }
                });
                found = false;
            } catch (AssertionError expected) {
                found = true;
            }
            explores = found;
        }
        return explores;
    }

    /** Skips the calling test unless the model checker works on this JDK (see {@link #checkerExplores()}). */
    public static void assumeCheckerExplores() {
        Assumptions.assumeTrue(checkerExplores(), "Lincheck does not explore interleavings on Java "
                + Runtime.version().feature() + " (it finds no lost update of two racing increments): skipped");
    }

    /** Runs the model check of {@code scenario} and asserts it finds an interleaving that breaks it. */
    public static void assertFindsBug(Runnable scenario) {
        assertFindsBug(INVOCATIONS, scenario);
    }

    /** {@link #assertFindsBug(Runnable)} exploring up to {@code invocations} interleavings (it stops at the bug). */
    public static void assertFindsBug(int invocations, Runnable scenario) {
        AssertionError found = assertThrows(AssertionError.class,
                () -> Lincheck.runConcurrentTest(invocations, scenario),
                "the model check passed a deliberately broken variant: it cannot find this bug");
        System.out.println("[model check] the broken variant failed as it must:\n" + found.getMessage());
    }

    /** A poller's table of pending operations, for checks outside this package. */
    public static PendingOperations pendingOperations(int capacity) {
        return new PendingOperations(capacity);
    }

    /** What the poller finds for a completion's {@code wr_id} (null: stale, duplicate or foreign). */
    public static PendingOperation lookup(PendingOperations pending, long wrId) {
        return pending.lookup(wrId);
    }

    /** A poller's task hand-over (on its own queue, as the engine's), for checks outside this package. */
    public static Executor handOff(Runnable[] terminate) {
        TaskHandOff h = new TaskHandOff("model");
        terminate[0] = () -> {
            h.runAll();
            h.terminate();
        };
        return task -> h.offer(task);
    }

    /** Starts {@code threads} and joins them (inside a model check: Lincheck schedules them). */
    public static void runAll(Thread... threads) {
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
