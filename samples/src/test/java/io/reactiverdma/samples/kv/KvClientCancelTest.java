package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Requests cancelled before they were sent (the gateway's request timeout, while the send queue is full):
 * on a connection that stays open, nothing may be left behind, neither the pending entry nor a large
 * value's REMOTE_READ registration.
 */
class KvClientCancelTest {
    private final FakeKvConnection fake = new FakeKvConnection(KvCodecTest.layout(64, 8));
    private final KvClient client = new KvClient(fake.connection, true);

    @Test
    void putsCancelledWhileQueuedLeaveNoPendingEntryAndNoRegistration() {
        byte[] large = new byte[8 * 1024]; // above the 4 KiB message size: registered for the server's READ
        byte[] small = new byte[16];
        for (int i = 0; i < 50; i++) {
            client.put("large-" + i, large).subscribe().dispose();
            client.put("small-" + i, small).subscribe().dispose();
            client.delete("gone-" + i).subscribe().dispose();
        }
        fake.postQueued(); // whatever is still queued goes out now, and is answered
        assertEquals(0, client.pendingRequests(), "pending entries left behind");
        assertEquals(50, fake.registered.get());
        assertEquals(fake.registered.get(), fake.registrationsReleased.get(), "REMOTE_READ registrations leaked");
    }

    @Test
    void aRequestThatIsNotCancelledStillGetsItsResponse() {
        client.put("k", new byte[8 * 1024]).toFuture();
        var done = client.put("k", new byte[8 * 1024]).toFuture();
        fake.postQueued();
        done.join();
        assertEquals(0, client.pendingRequests());
        assertEquals(2, fake.registrationsReleased.get());
    }
}
