package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.util.unit.DataSize;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The gateway with a key-value server it cannot reach (issue 24, review finding 3): on this host there is no
 * RDMA device, so every connection attempt fails, as against a dead backend. Before, every request and
 * every health probe dialled again, with no backoff; now requests fail fast (503 with Retry-After) until
 * the next attempt is due, health answers at once without dialling, and the timeouts are checked.
 */
class KvGatewayWhileTheBackendIsDownHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private KvGateway gateway;

    private static GatewayProperties properties(Duration requestTimeout, Duration minBackoff) {
        return new GatewayProperties(DataSize.ofMegabytes(4), DataSize.ofKilobytes(64), requestTimeout, 4,
                minBackoff, minBackoff.multipliedBy(4));
    }

    private static RdmaClient unreachable() {
        return RdmaClient.create().host("127.0.0.1").port(1).option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(2));
    }

    @AfterEach
    void stop() {
        if (gateway != null) {
            gateway.stop();
        }
    }

    @Test
    void afterAFailedAttemptRequestsFailFastUntilTheNextAttemptIsDue() {
        gateway = new KvGateway(unreachable(), properties(Duration.ofSeconds(10), Duration.ofSeconds(20)));
        gateway.start();
        GatewayUnavailableException first = assertThrows(GatewayUnavailableException.class,
                () -> gateway.client().block(WAIT));
        awaitFailure();
        for (int i = 0; i < 100; i++) {
            long t0 = System.nanoTime();
            GatewayUnavailableException e = assertThrows(GatewayUnavailableException.class,
                    () -> gateway.client().block(WAIT));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(e.getMessage().contains("next attempt in"), "dialled again: " + e.getMessage()
                    + " (first: " + first.getMessage() + ")");
            assertNotNull(e.retryAfter(), e.getMessage());
            assertTrue(GatewayErrors.retryAfterSeconds(e) >= 1);
            assertTrue(ms < 1000, "a request waited " + ms + " ms while the circuit was open");
        }
    }

    @Test
    void healthReportsTheStateWithoutDialling() {
        gateway = new KvGateway(unreachable(), properties(Duration.ofSeconds(10), Duration.ofSeconds(20)));
        gateway.start();
        awaitFailure();
        Duration before = gateway.nextAttemptIn();
        Health h = new KvHealthIndicator(gateway).health().block(WAIT);
        assertEquals(Status.DOWN, h.getStatus());
        assertEquals("none", h.getDetails().get("connection"));
        assertNotNull(h.getDetails().get("lastFailure"), h.toString());
        assertTrue((Long) h.getDetails().get("nextAttemptInMs") > 0, h.toString());
        assertFalse(gateway.isConnected());
        assertTrue(gateway.nextAttemptIn().compareTo(before) <= 0, "the probe started an attempt");
    }

    @Test
    void aConnectTimeoutNotShorterThanTheRequestTimeoutFailsTheStart() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new KvGateway(
                RdmaClient.create().host("127.0.0.1").option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(10)),
                properties(Duration.ofSeconds(10), Duration.ofMillis(100))));
        assertTrue(e.getMessage().contains("reactive-rdma.client.connect-timeout")
                && e.getMessage().contains("gateway.request-timeout"), e.getMessage());
    }

    @Test
    void theBackoffGrowsWithJitterUpToItsMaximumAndStartsOverAfterAStableConnection() {
        Reconnect r = new Reconnect(Duration.ofMillis(100), Duration.ofSeconds(1));
        long previousCap = 0;
        for (int i = 1; i <= 8; i++) {
            Duration d = r.failed();
            long cap = Math.min(1000, 100L << (i - 1));
            assertTrue(d.toMillis() >= cap / 2 - 1 && d.toMillis() <= cap, "attempt " + i + ": " + d);
            assertTrue(cap >= previousCap);
            previousCap = cap;
        }
        assertTrue(r.closed(Duration.ofSeconds(1).toNanos()).toMillis() >= 500, "a connection of 1 s is a flap");
        assertEquals(Duration.ZERO, r.closed(Reconnect.STABLE.toNanos()));
        assertEquals(0, r.failures());
    }

    private void awaitFailure() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (gateway.lastFailure() == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertNotNull(gateway.lastFailure(), "no attempt failed");
    }
}
