package io.reactiverdma.samples.feed;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One feed subscriber's accounting: ticks of its run move its {@link GapDetector}; anything else that arrives
 * on the group (another program's datagram, a tick of another run, a sequence number past the run's end) is
 * dropped and counted as foreign, so it can neither end the subscription nor skew the loss count. Thread-safe:
 * updated on the thread that delivers the datagrams, read by the demo's.
 */
final class FeedSubscriber {
    /** Ticks a slow subscriber asks for at a time: the rest waits in receive buffers. */
    private static final int SLOW_PREFETCH = 16;

    private final long run;
    private final long count;
    private final GapDetector detector = new GapDetector();
    private long foreign;
    private long firstNs;
    private long lastNs;
    private boolean sawLast;
    @Nullable
    private Throwable failure;

    /**
     * @param run   the publisher's run id (see {@link Tick})
     * @param count ticks the publisher sends, numbered 0..count-1
     */
    FeedSubscriber(long run, long count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be positive, got " + count);
        }
        this.run = run;
        this.count = count;
    }

    /**
     * Counts one datagram's payload; returns true when it was the run's last tick to arrive in order (every
     * earlier one arrived or was counted lost).
     */
    synchronized boolean onDatagram(ByteBuffer data) {
        if (Tick.refusal(data, run) != null) {
            foreign++;
            return false;
        }
        long seq = Tick.sequenceOf(data);
        if (seq >= count) {
            foreign++;
            return false;
        }
        long now = System.nanoTime();
        if (detector.received() == 0) {
            firstNs = now;
        }
        lastNs = now;
        detector.onSequence(seq);
        if (!sawLast && detector.expected() == count) {
            sawLast = true;
            return true;
        }
        return false;
    }

    /**
     * Subscribes to {@code joined}: every datagram is counted and released; {@code done} runs once, when the
     * last tick arrived or the stream ended (an error is kept as {@link #failure()}). With a {@code worker}, each
     * tick is counted there after {@code busyMicros} of work, {@value #SLOW_PREFETCH} asked for at a time (a
     * slow subscriber); what the worker's queue still holds when the subscription is cancelled is released.
     */
    Disposable subscribe(Flux<RdmaDatagramMessage> joined, @Nullable Scheduler worker, int busyMicros,
            Runnable done) {
        Objects.requireNonNull(done, "done");
        Flux<RdmaDatagramMessage> in = worker == null ? joined
                : joined.publishOn(worker, SLOW_PREFETCH).doOnDiscard(RdmaDatagramMessage.class,
                        RdmaDatagramMessage::release);
        Runnable once = new Runnable() {
            private boolean ran;

            @Override
            public synchronized void run() {
                if (!ran) {
                    ran = true;
                    done.run();
                }
            }
        };
        return in.subscribe(m -> {
            boolean last;
            try {
                if (busyMicros > 0) {
                    busy(busyMicros);
                }
                last = onDatagram(m.data());
            } finally {
                m.release();
            }
            if (last) {
                once.run();
            }
        }, e -> {
            synchronized (this) {
                failure = e;
            }
            once.run();
        }, once);
    }

    /** The publisher is done: whatever never arrived at the tail counts lost. */
    synchronized void finish() {
        detector.finish(count);
    }

    synchronized long received() {
        return detector.received();
    }

    synchronized long lost() {
        return detector.lost();
    }

    synchronized long reordered() {
        return detector.reordered();
    }

    synchronized long gaps() {
        return detector.gaps();
    }

    /** Datagrams dropped because they were not ticks of this run. */
    synchronized long foreign() {
        return foreign;
    }

    /** Why the subscription ended early, or null while it runs (or ended when cancelled). */
    @Nullable
    synchronized Throwable failure() {
        return failure;
    }

    /** Ticks per second between the first and the last tick received. */
    synchronized double ticksPerSecond() {
        double seconds = Math.max(1e-9, (lastNs - firstNs) / 1e9);
        return detector.received() / seconds;
    }

    private static void busy(int micros) {
        long until = System.nanoTime() + micros * 1_000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }
}
