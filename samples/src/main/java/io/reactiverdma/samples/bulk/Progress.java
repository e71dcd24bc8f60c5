package io.reactiverdma.samples.bulk;

import java.util.Locale;
import java.util.Optional;

/**
 * The progress line of a transfer, for example
 * {@code "512.0 MiB of 1.00 GiB (50%), 19.6 MiB/s, ETA 0:26"}, at most once per interval. The rate is the
 * average since the start; the ETA is what is left at that rate. Not thread-safe (one ticking thread asks).
 */
public final class Progress {
    /** The default interval between lines: at most one a second. */
    public static final long DEFAULT_INTERVAL_NS = 1_000_000_000L;

    private final long startNs;
    private final long intervalNs;
    private long lastLineNs;

    public Progress(long startNs, long intervalNs) {
        this.startNs = startNs;
        this.intervalNs = intervalNs;
        this.lastLineNs = startNs;
    }

    /**
     * The line for {@code bytes} of {@code totalBytes} done at {@code nowNs}, unless one was given less than the
     * interval ago.
     */
    public Optional<String> line(long bytes, long totalBytes, long nowNs) {
        if (nowNs - lastLineNs < intervalNs) {
            return Optional.empty();
        }
        lastLineNs = nowNs;
        return Optional.of(format(bytes, totalBytes, nowNs - startNs));
    }

    /** {@code bytes} of {@code totalBytes} after {@code elapsedNs}: amount, share, average rate and ETA. */
    public static String format(long bytes, long totalBytes, long elapsedNs) {
        double seconds = elapsedNs / 1e9;
        double rate = seconds > 0 ? bytes / seconds : 0;
        String share = totalBytes > 0 ? String.format(Locale.ROOT, " (%d%%)", bytes * 100 / totalBytes) : "";
        String eta = rate > 0 ? formatDuration((totalBytes - bytes) / rate) : "?";
        return bytes(bytes) + " of " + bytes(totalBytes) + share + ", " + rate(bytes, elapsedNs) + ", ETA " + eta;
    }

    /** The average rate, for example {@code "19.6 MiB/s"}. */
    public static String rate(long bytes, long elapsedNs) {
        double seconds = elapsedNs / 1e9;
        return String.format(Locale.ROOT, "%.1f MiB/s", seconds > 0 ? bytes / seconds / (1 << 20) : 0.0);
    }

    /** A size with a binary unit: {@code "100 B"}, {@code "64.0 KiB"}, {@code "512.0 MiB"}, {@code "1.00 GiB"}. */
    public static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        if (n < 1L << 20) {
            return String.format(Locale.ROOT, "%.1f KiB", n / 1024.0);
        }
        if (n < 1L << 30) {
            return String.format(Locale.ROOT, "%.1f MiB", n / (double) (1L << 20));
        }
        return String.format(Locale.ROOT, "%.2f GiB", n / (double) (1L << 30));
    }

    /** Seconds as {@code m:ss} or {@code h:mm:ss}, rounded up. */
    public static String formatDuration(double seconds) {
        long s = (long) Math.ceil(Math.max(0, seconds));
        if (s >= 3600) {
            return String.format(Locale.ROOT, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
        }
        return String.format(Locale.ROOT, "%d:%02d", s / 60, s % 60);
    }
}
