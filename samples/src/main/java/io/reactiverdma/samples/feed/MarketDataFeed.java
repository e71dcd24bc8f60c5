package io.reactiverdma.samples.feed;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.samples.common.DeviceAddress;
import io.reactiverdma.samples.common.SampleMain;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.annotation.Nullable;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A market-data feed on an RDMA multicast group ({@code scripts/demo feed}): why one uses unreliable
 * datagrams. One publisher reaches every subscriber with one send per tick (the fabric copies it), with no
 * connection per subscriber and no acknowledgements; the price is that ticks can be lost, so every tick
 * carries a sequence number and each subscriber detects gaps ({@link GapDetector}), as real feeds do (they
 * then recover from a snapshot or a retransmission service).
 */
public final class MarketDataFeed {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** How long a subscriber waits after the last tick it saw before counting the rest lost. */
    private static final Duration QUIET = Duration.ofMillis(500);

    private MarketDataFeed() {
    }

    /**
     * One subscriber's result.
     *
     * @param slow    the subscriber made slow on purpose ({@code --slow}): its loss is expected
     * @param foreign datagrams on the group that were not this run's ticks, dropped
     * @param failure why its subscription ended before the run did, or null
     */
    public record SubscriberReport(int index, boolean slow, long received, long lost, long reordered, long gaps,
                                   long foreign, double ticksPerSecond, @Nullable Throwable failure) {
        /**
         * True unless its subscription failed, or (not being the slow one) it lost more than
         * {@code maxLossPercent} of the {@code count} ticks published.
         */
        public boolean ok(long count, double maxLossPercent) {
            return failure == null && received + lost == count && (slow || 100.0 * lost / count <= maxLossPercent);
        }
    }

    public static void main(String[] args) {
        SampleMain.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) {
        return SampleMain.run("feed", FeedOptions.USAGE, args, err, FeedOptions::parse,
                List.of(RdmaException.class), o -> {
                    if (o.help()) {
                        out.println(FeedOptions.USAGE);
                        return 0;
                    }
                    List<SubscriberReport> reports = demo(o, out);
                    if (reports.stream().allMatch(r -> r.ok(o.count(), o.maxLossPercent()))) {
                        return 0;
                    }
                    err.println("feed: FAILED: a subscription failed, or a subscriber that is not the slow one lost "
                            + "more than " + o.maxLossPercent() + "% of the ticks (--max-loss)");
                    return 1;
                });
    }

    /** Publisher and subscribers in this JVM; returns each subscriber's report (also printed). */
    public static List<SubscriberReport> demo(FeedOptions o, PrintStream out) {
        String host = DeviceAddress.hostOrFind(o.host(), line -> out.println("feed: " + line));
        InetSocketAddress group = new InetSocketAddress(o.group(), 0);
        List<RdmaDatagramEndpoint> endpoints = new ArrayList<>();
        List<Disposable> subscriptions = new ArrayList<>();
        try {
            RdmaDatagramEndpoint publisher = RdmaDatagram.create().host(host).port(0).bindNow(WAIT);
            endpoints.add(publisher);
            if (o.size() > publisher.maxMessageSize()) {
                throw new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE, "-s " + o.size()
                        + " exceeds the largest datagram on this path, " + publisher.maxMessageSize() + " bytes");
            }
            long run = ThreadLocalRandom.current().nextLong();
            List<FeedSubscriber> subscribers = new ArrayList<>();
            CountDownLatch done = new CountDownLatch(o.subscribers());
            for (int i = 0; i < o.subscribers(); i++) {
                RdmaDatagramEndpoint s = RdmaDatagram.create().host(host).port(0).bindNow(WAIT);
                endpoints.add(s);
                FeedSubscriber subscriber = new FeedSubscriber(run, o.count());
                subscribers.add(subscriber);
                boolean slow = o.slowMicros() > 0 && i == o.subscribers() - 1;
                // The slow one works off the engine's thread, asking for a few ticks at a time: what it has
                // not asked for waits in receive buffers, and once all are held the device drops what arrives.
                Scheduler worker = slow ? Schedulers.newSingle("slow-subscriber") : null;
                if (worker != null) {
                    subscriptions.add(worker);
                }
                subscriptions.add(subscriber.subscribe(s.join(group), worker, slow ? o.slowMicros() : 0,
                        done::countDown));
                s.joined(group).block(WAIT);
            }
            // a member may send to the group: what the publisher receives is released unread
            subscriptions.add(publisher.join(group).subscribe(RdmaDatagramMessage::release,
                    e -> out.println("feed: the publisher's membership ended: " + e)));
            publisher.joined(group).block(WAIT);
            out.println("feed: " + o.subscribers() + " subscribers joined " + o.group() + "; publishing " + o.count()
                    + " ticks of " + o.size() + " bytes");
            long start = System.nanoTime();
            Flux.range(0, (int) Math.min(Integer.MAX_VALUE, o.count()))
                    .flatMap(seq -> publisher.send(new Tick(seq, seq % 50, 100_000_000L + seq).encode(run, o.size()),
                                    group)
                            .then(Mono.just(1)), o.window())
                    .then().block(WAIT.multipliedBy(10));
            double publishSeconds = (System.nanoTime() - start) / 1e9;
            out.printf("feed: published %d ticks in %.2f s (%.0f ticks/s)%n", o.count(), publishSeconds,
                    o.count() / publishSeconds);
            awaitQuietly(done, subscribers);
            List<SubscriberReport> reports = new ArrayList<>();
            for (int i = 0; i < subscribers.size(); i++) {
                FeedSubscriber f = subscribers.get(i);
                f.finish();
                boolean slow = o.slowMicros() > 0 && i == o.subscribers() - 1;
                SubscriberReport r = new SubscriberReport(i + 1, slow, f.received(), f.lost(), f.reordered(),
                        f.gaps(), f.foreign(), f.ticksPerSecond(), f.failure());
                reports.add(r);
                out.printf("feed: subscriber %d%s: received %d, lost %d (%.3f%%) in %d gaps, reordered %d, %.0f ticks/s, "
                                + "dropped locally %d, foreign datagrams dropped %d%s%n", r.index(), slow ? " (slow)" : "",
                        r.received(), r.lost(), 100.0 * r.lost() / o.count(), r.gaps(), r.reordered(),
                        r.ticksPerSecond(), endpoints.get(i + 1).droppedCount(), r.foreign(),
                        r.failure() == null ? "" : "; its subscription FAILED: " + r.failure());
            }
            return reports;
        } finally {
            subscriptions.forEach(Disposable::dispose);
            endpoints.forEach(e -> e.disposeNow(WAIT));
        }
    }

    /** Until every subscriber saw the last tick, or none saw anything new for {@link #QUIET}. */
    private static void awaitQuietly(CountDownLatch done, List<FeedSubscriber> subscribers) {
        long seen = -1;
        try {
            while (!done.await(QUIET.toMillis(), TimeUnit.MILLISECONDS)) {
                long now = 0;
                for (FeedSubscriber f : subscribers) {
                    now += f.received() + f.foreign();
                }
                if (now == seen) {
                    return;
                }
                seen = now;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
