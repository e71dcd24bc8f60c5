package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client's callers (the gateway's HTTP clients) can make it hold (issue 24, review finding 1): memory
 * registered for large PUTs is a fixed set of buffers, registered once and not per request; a PUT beyond them
 * fails at once as BUSY. On a fake connection, for two things the engine cannot do: count registrations (the
 * API does not expose them) and hold the server's answers until the test releases them (a real server
 * answers at once, so no PUT would stay in flight). The counter-name bounds run on the real engine:
 * {@link KvClientCounterCacheHostTest}.
 */
class KvClientResourceBoundsTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private final FakeKvConnection fake = new FakeKvConnection(KvCodecTest.layout(64, 8));

    /** Before: every large PUT registered a buffer of its own on the caller's thread (10 here). */
    @Test
    void largePutsReuseAFewBuffersRegisteredOnce() {
        KvClient client = new KvClient(fake.connection, true, 2);
        for (int i = 0; i < 10; i++) {
            CompletableFuture<Void> put = client.put("k" + i, new byte[8 * 1024]).toFuture();
            awaitQueued(1);
            fake.postQueued();
            put.orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join();
        }
        assertEquals(2, fake.registered.get(), "registrations for 10 large PUTs");
        assertEquals(0, fake.registrationsReleased.get());
        assertEquals(0, client.largePutsInFlight());
    }

    /** Before: the third PUT registered a third buffer (memory pinned without bound). */
    @Test
    void aLargePutBeyondTheBuffersFailsAtOnceAsBusy() {
        KvClient client = new KvClient(fake.connection, true, 2);
        List<CompletableFuture<Void>> held = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            held.add(client.put("k" + i, new byte[8 * 1024]).toFuture());
        }
        awaitQueued(2);
        KvException busy = assertThrows(KvException.class, () -> client.put("k3", new byte[8 * 1024]).block(WAIT));
        assertEquals(KvException.Reason.BUSY, busy.reason(), busy.getMessage());
        assertEquals(2, fake.registered.get());
        fake.postQueued();
        held.forEach(f -> f.orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join());
        client.put("k4", new byte[8 * 1024]).toFuture(); // a buffer is free again
        awaitQueued(1);
    }

    /**
     * Waits until {@code n} sends wait in the fake's queue, what {@link FakeKvConnection#postQueued()} acts
     * on. Not the client's pending requests: the first large PUT continues on the thread that registered the
     * buffers, which enters the request as pending before it subscribes to the send, so a post between the
     * two posted nothing and the PUT waited forever (CI, JDK 25, under load).
     */
    private void awaitQueued(int n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (fake.queuedSends() < n && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertTrue(fake.queuedSends() >= n, "sends queued: " + fake.queuedSends());
    }
}
