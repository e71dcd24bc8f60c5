package io.reactiverdma.spring.autoconfigure;

import java.time.Duration;

/**
 * The InfiniBand minimum RNR NAK timer codes (IBA 9.7.5.2.8, table 45) and the delay each stands for, so that
 * a {@code min-rnr-delay} can be given as a {@link Duration}: it becomes the code of the shortest delay not
 * below it.
 */
final class RnrTimerCodes {
    /** Code 1..31 -> nanoseconds; code 0 is the longest, 655.36 ms (index 0 holds it). */
    private static final long[] NANOS = {655_360_000, 10_000, 20_000, 30_000, 40_000, 60_000, 80_000, 120_000,
            160_000, 240_000, 320_000, 480_000, 640_000, 960_000, 1_280_000, 1_920_000, 2_560_000, 3_840_000,
            5_120_000, 7_680_000, 10_240_000, 15_360_000, 20_480_000, 30_720_000, 40_960_000, 61_440_000,
            81_920_000, 122_880_000, 163_840_000, 245_760_000, 327_680_000, 491_520_000};

    /** The longest delay a code stands for (code 0). */
    static final Duration LONGEST = Duration.ofNanos(NANOS[0]);

    private RnrTimerCodes() {
    }

    /**
     * The code of the shortest delay not below {@code delay}: 0 s..10 us -> 1, 640 us -> 12, 1 ms -> 14
     * (1.28 ms), 491.52 ms -> 31, above that up to 655.36 ms -> 0.
     *
     * @throws IllegalArgumentException when {@code delay} is negative or longer than 655.36 ms
     */
    static int codeFor(Duration delay) {
        if (delay.isNegative() || delay.compareTo(LONGEST) > 0) {
            throw new IllegalArgumentException("must be 0 to " + LONGEST.toNanos() / 1000 + " us (the longest RNR timer,"
                    + " code 0), got " + delay);
        }
        long nanos = delay.toNanos();
        for (int code = 1; code < NANOS.length; code++) {
            if (NANOS[code] >= nanos) {
                return code;
            }
        }
        return 0;
    }

    /** The delay {@code code} stands for. */
    static Duration delayOf(int code) {
        return Duration.ofNanos(NANOS[code]);
    }
}
