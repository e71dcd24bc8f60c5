package io.reactiverdma.reactive;

import java.util.Objects;

/**
 * What a completion poller does when a poll finds no completion (configuration value; the engine runs it).
 * Shaped after Agrona's {@code IdleStrategy.idle(int workCount)}: any work resets it to its first step.
 * <ul>
 *   <li>{@link #busySpin()}: poll again at once. Lowest latency; one core per poller, always.</li>
 *   <li>{@link #backoff(long, long, long, long)}: spin, then {@code Thread.yield()}, then park for
 *       exponentially longer times up to a maximum. Latency of a wake-up at most the maximum park.</li>
 *   <li>{@link #eventDriven(long)}: after a cycle that did work, poll up to {@code spinPolls} more times;
 *       then arm the CQ ({@code ibv_req_notify_cq}), poll once more (a completion that arrived before arming
 *       is not lost), and sleep on the completion channel until the device signals. No CPU while idle
 *       beyond the bounded spin; the completion of a request the poller has just posted is usually found
 *       by the spin, without a wake-up, which costs a system call and a thread switch.
 *       {@link #eventDriven()} is the default spin.</li>
 * </ul>
 * Immutable.
 */
public final class PollerIdleStrategy {
    /** The kinds of strategy. */
    public enum Kind { BUSY_SPIN, BACKOFF, EVENT_DRIVEN }

    private static final PollerIdleStrategy BUSY_SPIN = new PollerIdleStrategy(Kind.BUSY_SPIN, 0, 0, 0, 0);
    /**
     * The spin of {@link #eventDriven()}: polls after the last work before the poller arms the CQ and sleeps
     * (chosen by measurement against perftest {@code -e} on Soft-RoCE: docs/performance.md).
     */
    public static final long DEFAULT_SPIN_POLLS = 64;
    private static final PollerIdleStrategy EVENT_DRIVEN =
            new PollerIdleStrategy(Kind.EVENT_DRIVEN, DEFAULT_SPIN_POLLS, 0, 0, 0);

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

    /** {@link #eventDriven(long)} with {@link #DEFAULT_SPIN_POLLS}: the engine's default strategy. */
    public static PollerIdleStrategy eventDriven() {
        return EVENT_DRIVEN;
    }

    /**
     * Sleep on the completion channel when idle, after polling up to {@code spinPolls} more times once a
     * cycle did work (a post, a completion, a task): a completion arriving within the spin costs no arm, no
     * event and no wake-up. {@code 0} arms after the first poll that finds nothing. The spin follows work
     * only: a poller that woke and found nothing sleeps again at once. {@link #maxSpins()} returns it.
     *
     * @throws InvalidRequestException when {@code spinPolls} is negative
     */
    public static PollerIdleStrategy eventDriven(long spinPolls) {
        if (spinPolls < 0) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "spinPolls must be >= 0, got " + spinPolls);
        }
        return spinPolls == DEFAULT_SPIN_POLLS ? EVENT_DRIVEN
                : new PollerIdleStrategy(Kind.EVENT_DRIVEN, spinPolls, 0, 0, 0);
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

    /** Backoff: the spins before it yields; event-driven: the polls after work before it sleeps; else 0. */
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
        return switch (kind) {
            case BACKOFF -> "backoff(" + maxSpins + " spins, " + maxYields + " yields, park " + minParkPeriodNs
                    + ".." + maxParkPeriodNs + " ns)";
            case EVENT_DRIVEN -> "event_driven(" + maxSpins + " spin polls)";
            case BUSY_SPIN -> "busy_spin";
        };
    }
}
