package io.reactiverdma.samples.gateway;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * When the gateway may dial the key-value server again: exponential backoff with jitter between a minimum
 * and a maximum, growing with each failed attempt and with each connection that closed before it had been
 * open for {@link #STABLE} (a backend that accepts and then drops, a flapping link), back to the minimum
 * once a connection stayed up that long. Jitter (each delay drawn from [backoff/2, backoff]) keeps many
 * gateways from dialling a restarted server in lock step. Thread-safe.
 */
final class Reconnect {
    /** A connection open at least this long counts as healthy: its close starts the backoff over. */
    static final Duration STABLE = Duration.ofSeconds(30);

    private final long minNanos;
    private final long maxNanos;
    private int failures;
    private long nextAttemptAtNanos = System.nanoTime();

    Reconnect(Duration min, Duration max) {
        if (min.isNegative() || min.isZero() || max.compareTo(min) < 0) {
            throw new IllegalArgumentException("backoff needs 0 < min <= max, got " + min + " and " + max);
        }
        this.minNanos = min.toNanos();
        this.maxNanos = max.toNanos();
    }

    /** A connection attempt failed: returns how long until the next one may start. */
    synchronized Duration failed() {
        failures++;
        return delay();
    }

    /** A connection closed after {@code openNanos}: returns how long until the next attempt may start. */
    synchronized Duration closed(long openNanos) {
        if (openNanos >= STABLE.toNanos()) {
            failures = 0;
            nextAttemptAtNanos = System.nanoTime();
            return Duration.ZERO;
        }
        failures++;
        return delay();
    }

    /** Nanoseconds until an attempt may start; 0 when one may start now. */
    synchronized long nanosUntilNextAttempt() {
        return Math.max(0, nextAttemptAtNanos - System.nanoTime());
    }

    /** Attempts that failed (or connections that did not last) in a row. */
    synchronized int failures() {
        return failures;
    }

    private Duration delay() {
        long backoff = minNanos;
        for (int i = 1; i < failures && backoff < maxNanos; i++) {
            backoff *= 2;
        }
        backoff = Math.min(backoff, maxNanos);
        long jittered = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
        nextAttemptAtNanos = System.nanoTime() + jittered;
        return Duration.ofNanos(jittered);
    }
}
