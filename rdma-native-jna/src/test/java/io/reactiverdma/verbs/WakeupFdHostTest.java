package io.reactiverdma.verbs;

import io.reactiverdma.natives.ClosedResourceException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** eventfd wake-ups need only libc: tested on the host. */
class WakeupFdHostTest {
    @Test
    void signalMakesItReadableAndDrainResetsIt() {
        try (WakeupFd w = WakeupFd.create(); WakeupFd other = WakeupFd.create()) {
            ByteBuffer frame = Buffers.allocate(16);
            assertFalse(w.drain(), "nothing signalled yet");
            assertEquals(0, Fds.awaitEitherReadable(other.fd(), w.fd(), 20_000_000L, frame, "test"), "timed out");
            w.signal();
            w.signal(); // coalesces
            assertEquals(2, Fds.awaitEitherReadable(other.fd(), w.fd(), 1_000_000_000L, frame, "test"));
            other.signal();
            assertEquals(3, Fds.awaitEitherReadable(other.fd(), w.fd(), 1_000_000_000L, frame, "test"));
            assertTrue(w.drain());
            assertFalse(w.drain(), "one drain takes every coalesced signal");
            assertEquals(1, Fds.awaitEitherReadable(other.fd(), w.fd(), 0, frame, "test"));
        }
    }

    @Test
    void wakesAThreadBlockedInPoll() throws Exception {
        try (WakeupFd w = WakeupFd.create(); WakeupFd never = WakeupFd.create()) {
            int[] ready = new int[1];
            Thread sleeper = new Thread(() -> ready[0] = Fds.awaitEitherReadable(never.fd(), w.fd(),
                    30_000_000_000L, Buffers.allocate(16), "test"));
            sleeper.start();
            Thread.sleep(50);
            w.signal();
            sleeper.join(10_000);
            assertFalse(sleeper.isAlive(), "the signal woke the sleeper");
            assertEquals(2, ready[0]);
        }
    }

    /**
     * Review finding 2: signal() racing close() must never write into the file that reuses the closed fd's
     * number, and must fail only with ClosedResourceException (no EBADF escaping into a caller's dispose()).
     * Each round: a second thread spins signal() on a wake-up while this thread closes it, then a fresh
     * wake-up (which takes the same fd number) is checked: nobody signals it, so a signal means the old
     * signal() wrote into the reused fd.
     */
    @Test
    void signalRacingCloseNeverWritesIntoTheReusedFdNorThrowsEbadf() throws Exception {
        int rounds = 5_000;
        int reusedWrites = 0;
        java.util.List<Throwable> unexpected = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < rounds && unexpected.isEmpty(); i++) {
            WakeupFd old = WakeupFd.create();
            int number = old.fd();
            java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
            Thread signaller = new Thread(() -> {
                started.countDown();
                try {
                    while (true) {
                        old.signal();
                    }
                } catch (ClosedResourceException expected) {
                    // the only way out
                } catch (Throwable t) {
                    unexpected.add(t);
                }
            });
            signaller.start();
            started.await();
            old.close();
            WakeupFd fresh = WakeupFd.create();
            try {
                signaller.join(10_000);
                assertFalse(signaller.isAlive(), "the signaller saw the close");
                if (fresh.fd() == number && fresh.drain()) {
                    reusedWrites++;
                }
            } finally {
                fresh.close();
            }
        }
        assertEquals(java.util.List.of(), unexpected, "only ClosedResourceException may end a racing signal()");
        assertEquals(0, reusedWrites, "signals written into the fd that reused a closed wake-up's number");
    }

    @Test
    void closedIsRefused() {
        WakeupFd w = WakeupFd.create();
        w.close();
        w.close();
        assertThrows(ClosedResourceException.class, w::signal);
        assertThrows(ClosedResourceException.class, w::drain);
    }
}
