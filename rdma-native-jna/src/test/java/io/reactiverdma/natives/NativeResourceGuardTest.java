package io.reactiverdma.natives;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The call guard of {@link NativeResource} (review finding 1) and its close semantics (finding 5), on a probe
 * resource that stands for a native object: a call that is in progress delays the release, no call starts
 * once a close began, a second close returns only when the release is over, a failed release leaves the
 * resource open and retriable. No device needed: host test.
 */
class NativeResourceGuardTest {
    /** A resource whose "native object" is a flag: a call after the release is a use-after-free. */
    static final class Probe extends NativeResource {
        final AtomicBoolean freed = new AtomicBoolean();
        final AtomicInteger releases = new AtomicInteger();
        final AtomicInteger useAfterFree = new AtomicInteger();
        volatile CountDownLatch releaseGate;
        volatile RuntimeException releaseFailure;

        Probe(NativeResource parent) {
            super("probe", parent);
        }

        /** A call on the native object; {@code inside} runs while the call is in progress. */
        void call(Runnable inside) {
            beginCall();
            try {
                if (freed.get()) {
                    useAfterFree.incrementAndGet();
                }
                inside.run();
                if (freed.get()) {
                    useAfterFree.incrementAndGet();
                }
            } finally {
                endCall();
            }
        }

        /**
         * Like ProtectionDomain.registerMemory: the native create runs inside a call on this parent, then the
         * wrapper adopts itself into the parent; {@code whileCreating} runs between the two.
         */
        Probe createChild(AtomicInteger destroyed, Runnable whileCreating) {
            beginCall();
            try {
                whileCreating.run(); // the native object exists from here on
                return wrapOrDestroy(() -> new Probe(this), destroyed::incrementAndGet);
            } finally {
                endCall();
            }
        }

        @Override
        protected void release() {
            releases.incrementAndGet();
            CountDownLatch gate = releaseGate;
            if (gate != null) {
                await(gate);
            }
            RuntimeException f = releaseFailure;
            if (f != null) {
                releaseFailure = null;
                throw f;
            }
            freed.set(true);
        }
    }

    static void await(CountDownLatch l) {
        try {
            assertTrue(l.await(30, TimeUnit.SECONDS), "latch timed out");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void closeWaitsForTheCallInProgressThenReleasesOnce() throws Exception {
        Probe p = new Probe(null);
        CountDownLatch inCall = new CountDownLatch(1);
        CountDownLatch finishCall = new CountDownLatch(1);
        Thread caller = new Thread(() -> p.call(() -> {
            inCall.countDown();
            await(finishCall);
        }));
        caller.start();
        await(inCall);
        Thread closer = new Thread(p::close);
        closer.start();
        closer.join(300);
        assertTrue(closer.isAlive(), "close() returned while a call was in progress");
        assertEquals(0, p.releases.get(), "released while a call was in progress");
        assertThrows(ClosedResourceException.class, () -> p.call(() -> { }), "a call started after the close began");
        finishCall.countDown();
        closer.join(30_000);
        caller.join(30_000);
        assertFalse(closer.isAlive());
        assertEquals(1, p.releases.get());
        assertEquals(0, p.useAfterFree.get());
    }

    @Test
    void aSecondCloseReturnsOnlyOnceTheFirstReleaseIsOver() throws Exception {
        Probe p = new Probe(null);
        p.releaseGate = new CountDownLatch(1);
        Thread first = new Thread(p::close);
        first.start();
        while (p.releases.get() == 0) {
            Thread.onSpinWait();
        }
        AtomicBoolean secondReturned = new AtomicBoolean();
        Thread second = new Thread(() -> {
            p.close();
            secondReturned.set(true);
        });
        second.start();
        second.join(300);
        assertFalse(secondReturned.get(), "the second close() returned while the first was still releasing");
        p.releaseGate.countDown();
        first.join(30_000);
        second.join(30_000);
        assertTrue(secondReturned.get());
        assertTrue(p.freed.get());
        assertEquals(1, p.releases.get(), "released exactly once");
    }

    @Test
    void aFailedReleaseLeavesTheResourceOpenListedAndRetriable() {
        Probe parent = new Probe(null);
        Probe child = new Probe(parent);
        RuntimeException busy = new NativeCallException("ibv_dereg_mr", 22, "probe");
        child.releaseFailure = busy;
        assertSame(busy, assertThrows(NativeCallException.class, child::close));
        assertFalse(child.isClosed(), "a resource whose release failed still holds its native object");
        assertEquals(List.of(child), parent.children(), "still listed under its parent");
        child.call(() -> { }); // still usable
        child.close(); // retried, succeeds now
        assertTrue(child.isClosed());
        assertEquals(2, child.releases.get());
        assertEquals(List.of(), parent.children());
    }

    @Test
    void aParentWhoseChildFailedToReleaseStaysOpen() {
        Probe parent = new Probe(null);
        Probe child = new Probe(parent);
        child.releaseFailure = new NativeCallException("ibv_dealloc_mw", 16, "probe");
        assertThrows(NativeCallException.class, parent::close);
        assertFalse(parent.isClosed(), "freeing the parent under a live child would fail with EBUSY anyway");
        assertEquals(0, parent.releases.get(), "not released while a child lives");
        parent.close();
        assertTrue(parent.isClosed());
        assertTrue(child.isClosed());
    }

    @Test
    void callsRacingCloseNeverReachAReleasedObject() throws Exception {
        for (int round = 0; round < 200; round++) {
            Probe p = new Probe(null);
            List<Thread> callers = new ArrayList<>();
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            CountDownLatch go = new CountDownLatch(1);
            for (int t = 0; t < 3; t++) {
                Thread c = new Thread(() -> {
                    await(go);
                    try {
                        while (true) {
                            p.call(Thread::onSpinWait);
                        }
                    } catch (ClosedResourceException expected) {
                        // the only way out
                    } catch (Throwable e) {
                        unexpected.compareAndSet(null, e);
                    }
                });
                c.start();
                callers.add(c);
            }
            go.countDown();
            Thread.yield();
            p.close();
            assertTrue(p.freed.get(), "close() returned before the release was over");
            for (Thread c : callers) {
                c.join(30_000);
                assertFalse(c.isAlive());
            }
            assertEquals(null, unexpected.get());
            assertEquals(0, p.useAfterFree.get(), "calls reached the object after its release, round " + round);
            assertEquals(1, p.releases.get());
        }
    }

    /** Review finding 6: a native object created while its parent began closing is destroyed, not leaked. */
    @Test
    void aChildCreatedWhileItsParentClosesIsDestroyedNotLeaked() throws Exception {
        Probe parent = new Probe(null);
        AtomicInteger destroyed = new AtomicInteger();
        Thread[] closer = new Thread[1];
        assertThrows(ClosedResourceException.class, () -> parent.createChild(destroyed, () -> {
            closer[0] = new Thread(parent::close);
            closer[0].start();
            while (!parent.isClosed()) {
                Thread.onSpinWait(); // the close began: the wrapper's adoption is refused
            }
        }));
        closer[0].join(30_000);
        assertEquals(1, destroyed.get(), "the native object whose wrapper could not be adopted was destroyed");
        assertEquals(List.of(), parent.children());
    }
}
