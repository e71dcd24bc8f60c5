package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Requests cancelled before they were sent (the gateway's request timeout, while the send queue is full):
 * on a connection that stays open, nothing may be left behind, neither the pending entry nor a large
 * value's staging buffer. On a fake connection whose send queue the test fills and empties: the engine's
 * cannot be held full on demand (its sends go out as soon as there are credits, and a real server returns
 * them at once), so a cancel while queued could not be made to happen with it.
 */
class KvClientCancelTest {
    private final FakeKvConnection fake = new FakeKvConnection(KvCodecTest.layout(64, 8));
    private final KvClient client = new KvClient(fake.connection, true);

    @Test
    void putsCancelledWhileQueuedLeaveNoPendingEntryAndNoRegistration() {
        byte[] large = new byte[8 * 1024]; // above the 4 KiB message size: registered for the server's READ
        byte[] small = new byte[16];
        for (int i = 0; i < 50; i++) {
            client.put("large-" + i, large).subscribe(v -> { }, e -> { }).dispose(); // BUSY once the staging buffers are taken
            client.put("small-" + i, small).subscribe().dispose();
            client.delete("gone-" + i).subscribe().dispose();
        }
        fake.postQueued(); // whatever is still queued goes out now, and is answered
        assertEquals(0, client.pendingRequests(), "pending entries left behind");
        assertEquals(0, client.largePutsInFlight(), "staging buffers left taken");
        org.junit.jupiter.api.Assertions.assertTrue(fake.registered.get() <= KvClient.DEFAULT_LARGE_PUT_BUFFERS,
                "registered per request: " + fake.registered.get());
        assertEquals(0, fake.registrationsReleased.get(), "the staging buffers are kept for the next PUTs");
    }

    @Test
    void aRequestThatIsNotCancelledStillGetsItsResponse() throws Exception {
        var first = client.put("k", new byte[8 * 1024]).toFuture();
        var done = client.put("k", new byte[8 * 1024]).toFuture();
        awaitQueued(2);
        fake.postQueued();
        done.get(30, java.util.concurrent.TimeUnit.SECONDS);
        first.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(0, client.pendingRequests());
        assertEquals(0, client.largePutsInFlight());
    }

    /**
     * Large PUTs go out from the bounded elastic scheduler the first time (their staging is registered there).
     * Waits for the sends in the connection's queue, not for the client's pending entries: an entry is made
     * just before its send is subscribed, so counting entries let {@code postQueued} run before the last send
     * was queued, and that request was never answered (seen as a build hung in {@code join()}).
     */
    private void awaitQueued(int requests) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (fake.queuedSends() < requests && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
    }
}
