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

    @Test
    void closedIsRefused() {
        WakeupFd w = WakeupFd.create();
        w.close();
        w.close();
        assertThrows(ClosedResourceException.class, w::signal);
        assertThrows(ClosedResourceException.class, w::drain);
    }
}
