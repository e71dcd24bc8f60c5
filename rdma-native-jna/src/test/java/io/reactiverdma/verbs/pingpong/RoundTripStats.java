package io.reactiverdma.verbs.pingpong;

import java.util.Arrays;
import java.util.Locale;

/** Round-trip times of a ping run, in nanoseconds, and the summary the sample prints. */
final class RoundTripStats {
    private final long[] rttNs;
    private int count;

    RoundTripStats(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.rttNs = new long[capacity];
    }

    void record(long nanos) {
        if (count == rttNs.length) {
            throw new IllegalStateException("more samples than the " + rttNs.length + " expected");
        }
        rttNs[count++] = nanos;
    }

    int count() {
        return count;
    }

    /** The p-th percentile (0 < p <= 100) by nearest rank, in nanoseconds. */
    long percentileNs(double p) {
        if (count == 0) {
            throw new IllegalStateException("no samples");
        }
        if (!(p > 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in (0, 100], was " + p);
        }
        long[] sorted = Arrays.copyOf(rttNs, count);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p / 100.0 * count);
        return sorted[Math.max(0, rank - 1)];
    }

    long minNs() {
        return percentileNs(Double.MIN_VALUE);
    }

    long maxNs() {
        return percentileNs(100);
    }

    double meanNs() {
        if (count == 0) {
            throw new IllegalStateException("no samples");
        }
        double sum = 0;
        for (int i = 0; i < count; i++) {
            sum += rttNs[i];
        }
        return sum / count;
    }

    String summary() {
        return String.format(Locale.ROOT,
                "%d round trips: min %.1f us, median %.1f us, mean %.1f us, p99 %.1f us, max %.1f us",
                count, minNs() / 1e3, percentileNs(50) / 1e3, meanNs() / 1e3, percentileNs(99) / 1e3,
                maxNs() / 1e3);
    }
}
