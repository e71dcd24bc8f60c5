package io.reactiverdma.samples.feed;

import io.reactiverdma.reactive.RdmaDatagramMessage;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A feed subscriber under a hostile group (issue 24: five 10-byte datagrams from {@code mckey -s -S 10} ended
 * both subscriptions and the demo still exited 0): whatever is not a tick of its run is dropped and counted,
 * never ends the subscription and never moves the loss count.
 */
class FeedSubscriberTest {
    private static final long RUN = 42;
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Property(tries = 200)
    void strayDatagramsAreCountedForeignAndLeaveTheTickCountsAlone(@ForAll @Size(max = 20) List<byte[]> strays,
            @ForAll @Size(max = 20) List<Integer> positions) {
        int n = 50;
        FeedSubscriber f = new FeedSubscriber(RUN, n);
        int stray = 0;
        boolean sawLast = false;
        for (int seq = 0; seq < n; seq++) {
            while (stray < strays.size() && stray < positions.size() && Math.floorMod(positions.get(stray), n) == seq) {
                assertFalse(f.onDatagram(ByteBuffer.wrap(strays.get(stray++))));
            }
            sawLast |= f.onDatagram(new Tick(seq, 1, 2).encode(RUN, 64));
        }
        while (stray < strays.size()) {
            assertFalse(f.onDatagram(ByteBuffer.wrap(strays.get(stray++))));
        }
        f.finish();
        assertTrue(sawLast);
        assertEquals(n, f.received());
        assertEquals(0, f.lost());
        assertEquals(0, f.reordered());
        assertEquals(strays.size(), f.foreign());
    }

    /** The review's second case: a well-formed datagram with sequence 2^40 must not count 2^40 ticks lost. */
    @Test
    void aTickPastTheRunsEndIsForeignNotAHugeGap() {
        FeedSubscriber f = new FeedSubscriber(RUN, 3);
        f.onDatagram(new Tick(0, 1, 2).encode(RUN, 64));
        f.onDatagram(new Tick(1L << 40, 1, 2).encode(RUN, 64));
        f.onDatagram(new Tick(1, 1, 2).encode(RUN, 64));
        f.onDatagram(new Tick(2, 1, 2).encode(RUN, 64));
        f.finish();
        assertEquals(3, f.received());
        assertEquals(0, f.lost());
        assertEquals(1, f.foreign());
    }

    @Test
    void aStrayDatagramDoesNotEndTheSubscriptionAndEveryDatagramIsReleased() throws InterruptedException {
        List<HeapDatagram> in = new ArrayList<>();
        in.add(new HeapDatagram(new Tick(0, 1, 2).encode(RUN, 64)));
        for (int i = 0; i < 5; i++) {
            in.add(HeapDatagram.of(new byte[10])); // what mckey -s -S 10 sends
        }
        in.add(new HeapDatagram(new Tick(1, 1, 2).encode(RUN, 64)));
        in.add(new HeapDatagram(new Tick(2, 1, 2).encode(RUN + 1, 64))); // another run's
        in.add(new HeapDatagram(new Tick(2, 1, 2).encode(RUN, 64)));
        Sinks.Many<RdmaDatagramMessage> group = Sinks.many().unicast().onBackpressureBuffer();
        FeedSubscriber f = new FeedSubscriber(RUN, 3);
        CountDownLatch done = new CountDownLatch(1);
        Disposable d = f.subscribe(group.asFlux(), null, 0, done::countDown);
        in.forEach(m -> group.tryEmitNext(m).orThrow());
        assertTrue(done.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "the last tick was not seen");
        assertFalse(d.isDisposed(), "the subscription ended");
        assertNull(f.failure());
        assertEquals(3, f.received());
        assertEquals(6, f.foreign());
        in.forEach(m -> assertEquals(1, m.releases, "a datagram released " + m.releases + " times"));
        d.dispose();
    }

    @Test
    void aFailedSubscriptionIsReportedAndEndsTheWait() throws InterruptedException {
        FeedSubscriber f = new FeedSubscriber(RUN, 3);
        CountDownLatch done = new CountDownLatch(1);
        f.subscribe(Flux.error(new IllegalStateException("the endpoint closed")), null, 0, done::countDown);
        assertTrue(done.await(WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals("the endpoint closed", f.failure().getMessage());
        MarketDataFeed.SubscriberReport r = new MarketDataFeed.SubscriberReport(1, false, 0, 3, 0, 1, 0, 0,
                f.failure());
        assertFalse(r.ok(3, 100), "a failed subscription passed");
    }

    @Test
    void aSlowSubscribersQueuedDatagramsAreReleasedWhenItIsCancelled() throws InterruptedException {
        Scheduler worker = Schedulers.newSingle("slow-test");
        try {
            List<HeapDatagram> in = new ArrayList<>();
            for (int seq = 0; seq < 16; seq++) {
                in.add(new HeapDatagram(new Tick(seq, 1, 2).encode(RUN, 64)));
            }
            Sinks.Many<RdmaDatagramMessage> group = Sinks.many().unicast().onBackpressureBuffer();
            FeedSubscriber f = new FeedSubscriber(RUN, 1000);
            Disposable d = f.subscribe(group.asFlux(), worker, 200_000, () -> { }); // 0.2 s per tick
            in.forEach(m -> group.tryEmitNext(m).orThrow());
            // Cancelled while the worker works on a tick, as at the end of a run. (Reactor's publishOn cannot
            // discard what it queued when the cancel comes before its worker ever started draining: it
            // disposes that worker, and the drain that would discard never runs.)
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (in.get(0).releases == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            d.dispose();
            while (in.stream().anyMatch(m -> m.releases == 0) && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            in.forEach(m -> assertEquals(1, m.releases, "a datagram released " + m.releases + " times"));
        } finally {
            worker.dispose();
        }
    }

    @Test
    void aSubscriberThatLostTooMuchFailsTheRunUnlessItIsTheSlowOne() {
        assertTrue(new MarketDataFeed.SubscriberReport(1, false, 99, 1, 0, 1, 7, 1, null).ok(100, 1));
        assertFalse(new MarketDataFeed.SubscriberReport(1, false, 98, 2, 0, 1, 0, 1, null).ok(100, 1));
        assertTrue(new MarketDataFeed.SubscriberReport(2, true, 50, 50, 0, 1, 0, 1, null).ok(100, 1));
        assertFalse(new MarketDataFeed.SubscriberReport(1, false, 50, 0, 0, 0, 0, 1, null).ok(100, 1),
                "received + lost must account for every tick");
    }
}
