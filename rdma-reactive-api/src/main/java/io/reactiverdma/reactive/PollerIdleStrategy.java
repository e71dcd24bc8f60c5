package io.reactiverdma.reactive;

import java.util.Objects;

/**
 * What a completion poller does when a poll finds no completion (configuration value; the engine runs it).
 * Shaped after Agrona's {@code IdleStrategy.idle(int workCount)}: any work resets it to its first step.
 * <ul>
 *   <li>{@link #busySpin()}: poll again at once. Lowest latency; one core per poller, always.</li>
 *   <li>{@link #backoff(long, long, long, long)}: spin, then {@code Thread.yield()}, then park for
 *       exponentially longer times up to a maximum. Latency of a wake-up at most the maximum park.</li>
 *   <li>{@link #eventDriven()}: arm the CQ ({@code ibv_req_notify_cq}), poll once more (a completion that
 *       arrived before arming is not lost), then sleep on the completion channel until the device signals.
 *       No CPU while idle; a wake-up costs a system call and a thread switch.</li>
 * </ul>
 * Immutable.
 */
public final class PollerIdleStrategy {
    /** The kinds of strategy. */
    public enum Kind { BUSY_SPIN, BACKOFF, EVENT_DRIVEN }

    private static final PollerIdleStrategy BUSY_SPIN = new PollerIdleStrategy(Kind.BUSY_SPIN, 0, 0, 0, 0);
    private static final PollerIdleStrategy EVENT_DRIVEN = new PollerIdleStrategy(Kind.EVENT_DRIVEN, 0, 0, 0, 0);

    private final Kind kind;
    private final long maxSpins;
    private final long maxYields;
    private final long minParkPeriodNs;
    private final long maxParkPeriodNs;

    private PollerIdleStrategy(Kind kind, long maxSpins, long maxYields, long minParkPeriodNs, long maxParkPeriodNs) {
        this.kind = kind;
        this.maxSpins = maxSpins;
        this.maxYields = maxYields;
        this.minParkPeriodNs = minParkPeriodNs;
        this.maxParkPeriodNs = maxParkPeriodNs;
    }

    public static PollerIdleStrategy busySpin() {
        return BUSY_SPIN;
    }

    public static PollerIdleStrategy eventDriven() {
        return EVENT_DRIVEN;
    }

    /** Spin-yield-park with Agrona's {@code BackoffIdleStrategy} defaults: 10 spins, 5 yields, 1 us to 1 ms. */
    public static PollerIdleStrategy backoff() {
        return backoff(10, 5, 1_000, 1_000_000);
    }

    /**
     * Spin {@code maxSpins} times, yield {@code maxYields} times, then park from {@code minParkPeriodNs},
     * doubling up to {@code maxParkPeriodNs}.
     *
     * @throws InvalidRequestException when a count is negative or the park periods are not
     *                                 {@code 1 <= min <= max}
     */
    public static PollerIdleStrategy backoff(long maxSpins, long maxYields, long minParkPeriodNs, long maxParkPeriodNs) {
        if (maxSpins < 0 || maxYields < 0) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "maxSpins and maxYields must be >= 0, got " + maxSpins + " and " + maxYields);
        }
        if (minParkPeriodNs < 1 || maxParkPeriodNs < minParkPeriodNs) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "park periods must satisfy 1 <= minParkPeriodNs <= maxParkPeriodNs, got " + minParkPeriodNs
                            + " and " + maxParkPeriodNs);
        }
        return new PollerIdleStrategy(Kind.BACKOFF, maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs);
    }

    public Kind kind() {
        return kind;
    }

    public long maxSpins() {
        return maxSpins;
    }

    public long maxYields() {
        return maxYields;
    }

    public long minParkPeriodNs() {
        return minParkPeriodNs;
    }

    public long maxParkPeriodNs() {
        return maxParkPeriodNs;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PollerIdleStrategy s && s.kind == kind && s.maxSpins == maxSpins
                && s.maxYields == maxYields && s.minParkPeriodNs == minParkPeriodNs
                && s.maxParkPeriodNs == maxParkPeriodNs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, maxSpins, maxYields, minParkPeriodNs, maxParkPeriodNs);
    }

    @Override
    public String toString() {
        return kind == Kind.BACKOFF ? "backoff(" + maxSpins + " spins, " + maxYields + " yields, park "
                + minParkPeriodNs + ".." + maxParkPeriodNs + " ns)" : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
