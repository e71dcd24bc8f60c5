package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.function.LongSupplier;

/**
 * Idle peer detection ({@code IDLE_PROBE_INTERVAL}) for one connection. RC retransmits only while a request
 * is outstanding, so a connection on which nothing happens never learns that its peer's host died. This
 * asks the send queue for a probe (a signalled zero-length RDMA WRITE, {@link SendQueue#probe()}) once the
 * connection has been quiet for the interval: nothing completed (the connection counts its completions,
 * {@code activity}) and nothing posted and outstanding. A live peer's device acknowledges the probe (its
 * completion is activity, so the next probe comes an interval later); a dead one does not, and the probe's
 * {@code RETRY_EXC_ERR} after the retry bound closes the connection like any error completion.
 *
 * <p>Cost: no timer per operation and nothing on the data path but the connection's completion count. One
 * engine-timer task per connection every quarter interval hands {@link #check} to the poller, which
 * compares two counters; so a connection is probed after between one and one and a quarter intervals of
 * quiet.
 */
final class IdleProbe {
    private final SendQueue send;
    private final LongSupplier activity;
    private final long intervalNs;
    /** The poller's task, made once (the timer hands the same object over each time). */
    private final Runnable check = this::check;
    private final ScheduledFuture<?> timer;
    // ---- poller thread only
    private long activitySeen;
    private long quietSinceNs;
    private boolean stopped;

    private IdleProbe(CompletionPoller poller, SendQueue send, LongSupplier activity, Duration interval) {
        this.send = send;
        this.activity = activity;
        this.intervalNs = interval.toNanos();
        this.activitySeen = activity.getAsLong();
        this.quietSinceNs = System.nanoTime();
        Duration period = interval.dividedBy(4);
        this.timer = EngineTimer.every(() -> poller.execute(check),
                period.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : period);
    }

    /** Poller thread, once the connection is established: null when {@code interval} is zero (off). */
    static IdleProbe start(CompletionPoller poller, SendQueue send, LongSupplier activity, Duration interval) {
        return interval.isZero() ? null : new IdleProbe(poller, send, activity, interval);
    }

    /** Poller thread: the connection closes; the timer task leaves the engine timer at once. */
    void stop() {
        stopped = true;
        timer.cancel(false);
    }

    private void check() {
        if (stopped) {
            return;
        }
        long now = System.nanoTime();
        long seen = activity.getAsLong();
        if (seen != activitySeen || send.outstanding() > 0) {
            activitySeen = seen;
            quietSinceNs = now;
            return;
        }
        if (now - quietSinceNs >= intervalNs) {
            quietSinceNs = now; // its completion is activity; a refused probe closes the connection
            send.probe();
        }
    }
}
