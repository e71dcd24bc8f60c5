package io.reactiverdma.samples.feed;

/**
 * What a feed subscriber learns from sequence numbers alone, since datagrams carry no delivery guarantee:
 * a jump forward counts the skipped numbers as lost; a number below the next expected one is a late
 * (reordered) arrival of one counted lost before, so it moves from lost to reordered. Not thread-safe: one
 * subscriber's stream.
 */
public final class GapDetector {
    private long expected;
    private long received;
    private long lost;
    private long reordered;
    private long gaps;

    /** A datagram with sequence number {@code seq} arrived. */
    public void onSequence(long seq) {
        received++;
        if (seq == expected) {
            expected++;
        } else if (seq > expected) {
            gaps++;
            lost += seq - expected;
            expected = seq + 1;
        } else {
            reordered++;
            lost--;
        }
    }

    /** The publisher sent {@code total} (0..total-1): whatever never arrived at the tail is lost too. */
    public void finish(long total) {
        if (expected < total) {
            gaps++;
            lost += total - expected;
            expected = total;
        }
    }

    public long received() {
        return received;
    }

    public long lost() {
        return lost;
    }

    public long reordered() {
        return reordered;
    }

    /** Separate runs of missing numbers. */
    public long gaps() {
        return gaps;
    }

    /** The next sequence number expected. */
    public long expected() {
        return expected;
    }
}
