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

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
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

    /** One subscriber's result. */
    public record SubscriberReport(int index, long received, long lost, long reordered, long gaps, double ticksPerSecond) {
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
                    return reports.stream().allMatch(r -> r.received() > 0) ? 0 : 1;
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
            List<GapDetector> detectors = new ArrayList<>();
            long[] firstNs = new long[o.subscribers()];
            long[] lastNs = new long[o.subscribers()];
            CountDownLatch done = new CountDownLatch(o.subscribers());
            for (int i = 0; i < o.subscribers(); i++) {
                RdmaDatagramEndpoint s = RdmaDatagram.create().host(host).port(0).bindNow(WAIT);
                endpoints.add(s);
                GapDetector d = new GapDetector();
                detectors.add(d);
                int index = i;
                boolean slow = o.slowMicros() > 0 && i == o.subscribers() - 1;
                Flux<RdmaDatagramMessage> joined = s.join(group);
                Flux<Long> ticks = joined.map(MarketDataFeed::sequenceOf);
                if (slow) {
                    // Works off the engine's thread, asking for 16 ticks at a time: what it has not asked for
                    // waits in receive buffers, and once all are held the device drops what arrives.
                    Scheduler worker = Schedulers.newSingle("slow-subscriber");
                    subscriptions.add(worker);
                    ticks = joined.publishOn(worker, 16).map(m -> {
                        long seq = sequenceOf(m);
                        busy(o.slowMicros());
                        return seq;
                    });
                }
                subscriptions.add(ticks.subscribe(seq -> {
                    synchronized (d) { // updated on the endpoint's poller thread, read by this one
                        long now = System.nanoTime();
                        if (d.received() == 0) {
                            firstNs[index] = now;
                        }
                        lastNs[index] = now;
                        d.onSequence(seq);
                        if (d.expected() == o.count()) {
                            done.countDown();
                        }
                    }
                }));
                s.joined(group).block(WAIT);
            }
            publisher.join(group).subscribe(RdmaDatagramMessage::release); // a member may send to the group
            publisher.joined(group).block(WAIT);
            out.println("feed: " + o.subscribers() + " subscribers joined " + o.group() + "; publishing " + o.count()
                    + " ticks of " + o.size() + " bytes");
            long start = System.nanoTime();
            Flux.range(0, (int) Math.min(Integer.MAX_VALUE, o.count()))
                    .flatMap(seq -> publisher.send(new Tick(seq, seq % 50, 100_000_000L + seq).encode(o.size()), group)
                            .then(Mono.just(1)), o.window())
                    .then().block(WAIT.multipliedBy(10));
            double publishSeconds = (System.nanoTime() - start) / 1e9;
            out.printf("feed: published %d ticks in %.2f s (%.0f ticks/s)%n", o.count(), publishSeconds,
                    o.count() / publishSeconds);
            awaitQuietly(done, detectors);
            List<SubscriberReport> reports = new ArrayList<>();
            for (int i = 0; i < detectors.size(); i++) {
                GapDetector d = detectors.get(i);
                synchronized (d) {
                    d.finish(o.count());
                    double seconds = Math.max(1e-9, (lastNs[i] - firstNs[i]) / 1e9);
                    SubscriberReport r = new SubscriberReport(i + 1, d.received(), d.lost(), d.reordered(), d.gaps(),
                            d.received() / seconds);
                    reports.add(r);
                    out.printf("feed: subscriber %d: received %d, lost %d (%.3f%%) in %d gaps, reordered %d, %.0f ticks/s, "
                                    + "dropped locally %d%n", r.index(), r.received(), r.lost(), 100.0 * r.lost() / o.count(),
                            r.gaps(), r.reordered(), r.ticksPerSecond(), endpoints.get(i + 1).droppedCount());
                }
            }
            return reports;
        } finally {
            subscriptions.forEach(Disposable::dispose);
            endpoints.forEach(e -> e.disposeNow(WAIT));
        }
    }

    private static void busy(int micros) {
        long until = System.nanoTime() + micros * 1_000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
    }

    private static long sequenceOf(RdmaDatagramMessage m) {
        try {
            return Tick.decode(m.data()).sequence();
        } finally {
            m.release();
        }
    }

    /** Until every subscriber saw the last tick, or none saw anything new for {@link #QUIET}. */
    private static void awaitQuietly(CountDownLatch done, List<GapDetector> detectors) {
        long seen = -1;
        try {
            while (!done.await(QUIET.toMillis(), TimeUnit.MILLISECONDS)) {
                long now = 0;
                for (GapDetector d : detectors) {
                    synchronized (d) {
                        now += d.received();
                    }
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
