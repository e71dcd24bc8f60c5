package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.ModelChecks;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.function.Supplier;

import static io.reactiverdma.reactive.impl.completion.ModelChecks.INVOCATIONS;
import static io.reactiverdma.reactive.impl.completion.ModelChecks.assertFindsBug;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Model check (Lincheck) of the streaming send's staging handshake, {@link StagingGate}, as
 * {@link StreamingSend} uses it: upstream's onNext (one thread, two messages) copies into the staging area
 * while the poller terminates the stream and gives the area back to the pool. No copy may touch the area
 * once it is back in the pool, and the area goes back exactly once: by the poller's close, or by the poller's
 * second try that an onNext still inside asked for ({@code schedule()}). Three broken variants (one side's
 * write and read swapped), asserted to fail, keep the check honest.
 */
@Tag("model-check")
class StagingGateModelCheck {

    @BeforeEach
    void onlyWhereTheCheckerExplores() {
        ModelChecks.assumeCheckerExplores();
    }

    @Test
    void aRacingOnNextNeverWritesIntoAStagingAreaBackInThePoolAndTheAreaGoesBackOnce() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(StagingGate::new));
    }

    /** Checking the close before saying "producing": the poller may release between the two. */
    @Test
    void theCheckFindsAWriteIntoThePoolWhenOnNextChecksTheCloseBeforeSayingItProduces() {
        assertFindsBug(() -> scenario(() -> new StagingGate() {
            @Override
            boolean enter() {
                boolean wasClosed = closed;
                producing = 1;
                return !wasClosed;
            }
        }));
    }

    /**
     * Reading "producing" before publishing the close: an onNext in between writes after the release, or
     * leaves the release to nobody.
     */
    @Test
    void theCheckFindsALeakOrAWriteIntoThePoolWhenThePollerReadsProducingBeforeClosing() {
        assertFindsBug(() -> scenario(() -> new StagingGate() {
            @Override
            boolean close() {
                boolean idle = producing == 0;
                closed = true;
                return idle;
            }
        }));
    }

    /** Reading the close before clearing "producing": nobody releases the area (a leaked slab). */
    @Test
    void theCheckFindsALeakedStagingAreaWhenOnNextReadsTheCloseBeforeLeaving() {
        assertFindsBug(() -> scenario(() -> new StagingGate() {
            @Override
            boolean leave() {
                boolean wasClosed = closed;
                producing = 0;
                return wasClosed;
            }
        }));
    }

    private static void scenario(Supplier<StagingGate> make) {
        StagingGate gate = make.get();
        Staging staging = new Staging();
        Thread upstream = new Thread(() -> {
            for (int i = 0; i < 2; i++) { // onNext, as StreamingSend does it
                boolean open = gate.enter();
                if (open) {
                    staging.write();
                }
                if (gate.leave()) {
                    staging.retryAsked = true; // schedule(): the poller runs releaseStagingIfIdle again
                }
            }
        });
        Thread poller = new Thread(() -> staging.releaseIfIdle(gate)); // the stream terminated
        ModelChecks.runAll(upstream, poller);
        if (staging.retryAsked) {
            staging.releaseIfIdle(gate); // the task upstream scheduled, on the poller
        }
        assertEquals(0, staging.writesIntoThePool, "copies into a staging area already back in the pool");
        assertEquals(1, staging.releases, "times the staging area went back to the pool");
    }

    /** The staging area and the pool (plain fields: the gate alone must order them). */
    private static final class Staging {
        boolean inPool;
        int releases;
        int writesIntoThePool;
        int bytes;
        boolean retryAsked;

        void write() {
            if (inPool) {
                writesIntoThePool++;
            }
            bytes++;
            if (inPool) {
                writesIntoThePool++;
            }
        }

        /** StreamingSend.releaseStagingIfIdle (nothing outstanding): once, when no producer is inside. */
        void releaseIfIdle(StagingGate gate) {
            if (releases > 0) {
                return;
            }
            if (gate.close()) {
                inPool = true;
                releases++;
            }
        }
    }
}
