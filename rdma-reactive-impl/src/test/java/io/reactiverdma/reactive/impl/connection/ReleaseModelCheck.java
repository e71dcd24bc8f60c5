package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.impl.completion.ModelChecks;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;

import org.jetbrains.lincheck.Lincheck;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.concurrent.Executor;
import java.util.function.BiFunction;

import static io.reactiverdma.reactive.impl.completion.ModelChecks.INVOCATIONS;
import static io.reactiverdma.reactive.impl.completion.ModelChecks.assertFindsBug;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Model check (Lincheck) of a received message's release, end to end on the engine's own parts: the
 * handle's compare-and-set ({@link SingleRelease}, as {@link EngineMessage} uses it), the hand-over to the
 * poller ({@code TaskHandOff}, across the poller's end), the buffer's generation stamp
 * ({@link BufferGenerations}) and the generation-stamped {@code wr_id}s of the poller's
 * {@link PendingOperations}. The application and a discard hook release the same message at once while the
 * poller runs what is handed over and ends: the buffer goes back exactly once and is reposted once, no
 * give-back is refused as stale (the CAS alone stopped the second), and a late duplicate completion of the
 * old {@code wr_id} finds nothing, while the reposted receive's {@code wr_id} finds its entry. A broken
 * variant (the CAS replaced by a read and a write), asserted to fail, keeps the check honest.
 */
@Tag("model-check")
class ReleaseModelCheck {

    @BeforeEach
    void onlyWhereTheCheckerExplores() {
        ModelChecks.assumeCheckerExplores();
    }

    @Test
    void aMessageReleasedTwiceAtOnceGoesBackOnceAndAStaleWrIdFindsNothing() {
        Lincheck.runConcurrentTest(INVOCATIONS, () -> scenario(Handle::new));
    }

    /** get-then-set instead of the CAS: both releases reach the engine (its generation check fires). */
    @Test
    void theCheckFindsADoubleGiveBackWhenTheReleaseIsAReadAndAWriteInsteadOfACas() {
        assertFindsBug(() -> scenario((r, stamp) -> new Handle(r, stamp) {
            @Override
            boolean claimRelease() {
                if (released != 0) {
                    return false;
                }
                released = 1;
                return true;
            }
        }));
    }

    private static void scenario(BiFunction<Receives, Integer, Handle> make) {
        Receives receives = new Receives();
        // A receive posted into buffer 0 completed: its slot is free, the message goes to the application.
        PendingOperation posted = receives.post();
        long firstWrId = posted.wrId();
        assertSame(posted, ModelChecks.lookup(receives.pending, firstWrId));
        receives.pending.free(posted);
        Handle message = make.apply(receives, receives.generations.current(0));

        Thread application = new Thread(message::release);
        Thread discardHook = new Thread(message::release);
        Thread poller = new Thread(receives.pollerEnd[0]);
        ModelChecks.runAll(application, discardHook, poller);

        assertEquals(0, receives.refused, "give-backs refused as stale (released twice inside the engine)");
        assertEquals(1, receives.reposted, "times buffer 0 was reposted");
        assertNull(ModelChecks.lookup(receives.pending, firstWrId), "a late duplicate of the old wr_id was delivered");
        assertSame(receives.current, ModelChecks.lookup(receives.pending, receives.current.wrId()),
                "the reposted receive's wr_id");
    }

    /** A handle released as EngineMessage releases: the CAS, then the hand-over of the give-back. */
    private static class Handle extends SingleRelease implements Runnable {
        private final Receives receives;
        private final int generation;

        Handle(Receives receives, int generation) {
            this.receives = receives;
            this.generation = generation;
        }

        void release() {
            if (claimRelease()) {
                receives.poller.execute(this);
            }
        }

        @Override
        public void run() {
            receives.giveBack(0, generation);
        }
    }

    /** One receive buffer of a connection, owned by its poller (ReceiveQueue's give-back and repost). */
    private static final class Receives {
        final PendingOperations pending = ModelChecks.pendingOperations(2);
        final BufferGenerations generations = new BufferGenerations("model", 1);
        final Runnable[] pollerEnd = new Runnable[1];
        final Executor poller = ModelChecks.handOff(pollerEnd);
        PendingOperation current;
        int reposted;
        int refused;

        PendingOperation post() {
            current = pending.acquire(null, OperationType.RECEIVE, null, 0, 0L);
            return current;
        }

        void giveBack(int index, int generation) {
            try {
                generations.giveBack(index, generation);
            } catch (IllegalStateException stale) {
                refused++;
                return;
            }
            reposted++;
            post();
        }
    }
}
