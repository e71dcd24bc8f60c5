package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.reactive.ConnectionClosedException;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Idle peer detection ({@code IDLE_PROBE_INTERVAL}) for one connection. RC retransmits only while a request
 * is outstanding, so a connection on which nothing happens never learns that its peer's host died. This
 * asks the send queue for a probe (a signalled zero-length RDMA WRITE, {@link SendQueue#probe()}) once the
 * connection has been quiet for the interval: nothing completed (the connection counts its completions,
 * {@code activity}) and nothing posted and outstanding. A live peer's device acknowledges the probe (its
 * completion is activity, so the next probe comes an interval later); a dead one does not, and the probe's
 * {@code RETRY_EXC_ERR} after the retry bound closes the connection like any error completion. A probe
 * that is neither acknowledged nor failed within another interval closes the connection too
 * ({@link ConnectionClosedException}): the QP may retry for much longer than that, or forever (rxe takes a
 * RETRY_COUNT of 7, librdmacm's default for a plain peer's connect, as "retry forever").
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
    private final Duration interval;
    private final String description;
    /** Closes the connection (poller thread). */
    private final Consumer<Throwable> dead;
    /** The poller's task, made once (the timer hands the same object over each time). */
    private final Runnable check = this::check;
    private final ScheduledFuture<?> timer;
    // ---- poller thread only
    private long activitySeen;
    private long quietSinceNs;
    /** A probe was posted at {@link #probeSentNs} and nothing completed since. */
    private boolean probing;
    private long probeSentNs;
    private boolean stopped;

    private IdleProbe(CompletionPoller poller, SendQueue send, LongSupplier activity, Duration interval,
            String description, Consumer<Throwable> dead) {
        this.send = send;
        this.activity = activity;
        this.intervalNs = interval.toNanos();
        this.interval = interval;
        this.description = description;
        this.dead = dead;
        this.activitySeen = activity.getAsLong();
        this.quietSinceNs = System.nanoTime();
        Duration period = interval.dividedBy(4);
        this.timer = EngineTimer.every(() -> poller.execute(check),
                period.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : period);
    }

    /** Poller thread, once the connection is established: null when {@code interval} is zero (off). */
    static IdleProbe start(CompletionPoller poller, SendQueue send, LongSupplier activity, Duration interval,
            String description, Consumer<Throwable> dead) {
        return interval.isZero() ? null : new IdleProbe(poller, send, activity, interval, description, dead);
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
        if (seen != activitySeen) { // something completed: the probe's acknowledgement, or other work
            activitySeen = seen;
            quietSinceNs = now;
            probing = false;
            return;
        }
        if (probing) {
            // The probe was posted first after a quiet interval, so its completion comes before any other.
            if (now - probeSentNs >= intervalNs) {
                stop();
                EngineLog.warn(description + ": its idle probe was not acknowledged within " + interval
                        + "; the peer is gone, closing");
                dead.accept(new ConnectionClosedException(description + ": its idle probe (a zero-length RDMA "
                        + "WRITE) was neither acknowledged nor failed within " + interval + "; the peer is gone"));
            }
            return;
        }
        if (send.outstanding() > 0) {
            quietSinceNs = now; // posted work times out by itself within the retry bound
            return;
        }
        if (now - quietSinceNs >= intervalNs) {
            probing = true;
            probeSentNs = now;
            send.probe(); // a refused probe closes the connection
        }
    }
}
