package io.reactiverdma.samples.feed;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.Disposable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The feed sample on rxe: two subscribers on one group see the ticks, and every tick is accounted for. */
@Tag(RxeTestSupport.TAG)
class MarketDataFeedRxeTest {
    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @Test
    void everyTickIsReceivedOrCountedLost() {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        FeedOptions o = FeedOptions.parse(new String[] {"demo", "-n", "2000", "--subscribers", "2",
                "--host", RxeTestSupport.deviceAddress(), "--group", "239.1.1.7"});
        List<MarketDataFeed.SubscriberReport> reports = MarketDataFeed.demo(o,
                new PrintStream(text, true, StandardCharsets.UTF_8));
        String out = text.toString(StandardCharsets.UTF_8);
        assertEquals(2, reports.size(), out);
        for (MarketDataFeed.SubscriberReport r : reports) {
            assertEquals(2000, r.received() + r.lost(), "received + lost = published: " + out);
            assertTrue(r.received() > 1000, "most ticks arrive on an idle link: " + out);
        }
        assertTrue(out.contains("subscriber 2: received"), out);
    }

    /** A subscriber slower than the feed loses ticks (the device drops them) and says so; the other does not. */
    @Test
    void aSlowSubscriberSeesItsLossAsGaps() {
        ByteArrayOutputStream text = new ByteArrayOutputStream();
        FeedOptions o = FeedOptions.parse(new String[] {"demo", "-n", "2000", "--subscribers", "2", "--slow", "3000",
                "--host", RxeTestSupport.deviceAddress(), "--group", "239.1.1.8"});
        List<MarketDataFeed.SubscriberReport> reports = MarketDataFeed.demo(o,
                new PrintStream(text, true, StandardCharsets.UTF_8));
        String out = text.toString(StandardCharsets.UTF_8);
        MarketDataFeed.SubscriberReport slow = reports.get(1);
        assertEquals(2000, slow.received() + slow.lost(), out);
        assertTrue(slow.lost() > 0 && slow.gaps() > 0, "the slow subscriber must fall behind and lose ticks: " + out);
        assertEquals(2000, reports.get(0).received() + reports.get(0).lost(), out);
    }

    /**
     * Issue 24 (review finding 10), as reproduced with {@code mckey -s -S 10}: another member of the group sends
     * 10-byte datagrams, and well-formed 32-byte ones with a huge sequence number, while the feed runs. Before,
     * the first stray ended each subscription (ErrorCallbackNotImplemented), the rest of the ticks counted lost,
     * and the run still exited 0. Now the strays are dropped and counted, the ticks are all accounted for and
     * the exit status is 0 only because nothing failed.
     */
    @Test
    void strayDatagramsOnTheGroupAreDroppedAndCountedWithoutEndingTheFeed() throws Exception {
        String group = "239.1.1.9";
        InetSocketAddress to = new InetSocketAddress(group, 0);
        RdmaDatagramEndpoint hostile = RdmaDatagram.create().host(RxeTestSupport.deviceAddress()).port(0)
                .bindNow(Duration.ofSeconds(60));
        AtomicBoolean running = new AtomicBoolean(true);
        Thread strays = null;
        try {
            Disposable member = hostile.join(to).subscribe(RdmaDatagramMessage::release);
            hostile.joined(to).block(Duration.ofSeconds(60));
            AtomicLong sent = new AtomicLong();
            strays = new Thread(() -> {
                ByteBuffer big = ByteBuffer.allocate(32);
                big.putInt(0, Tick.MAGIC).putLong(12, 1L << 40); // magic, no run id of this feed's
                while (running.get()) {
                    ByteBuffer small = ByteBuffer.allocate(10);
                    hostile.send(small, to).then(hostile.send(big.duplicate(), to))
                            .onErrorResume(e -> reactor.core.publisher.Mono.empty()).block(Duration.ofSeconds(10));
                    sent.addAndGet(2);
                    LockSupport.parkNanos(2_000_000);
                }
            }, "stray-sender");
            strays.start();
            ByteArrayOutputStream text = new ByteArrayOutputStream();
            ByteArrayOutputStream errText = new ByteArrayOutputStream();
            int status = MarketDataFeed.run(new String[] {"demo", "-n", "2000", "--subscribers", "2",
                            "--host", RxeTestSupport.deviceAddress(), "--group", group, "--max-loss", "50"},
                    new PrintStream(text, true, StandardCharsets.UTF_8), new PrintStream(errText, true, StandardCharsets.UTF_8));
            running.set(false);
            strays.join(30_000);
            member.dispose();
            String out = text.toString(StandardCharsets.UTF_8) + errText.toString(StandardCharsets.UTF_8);
            System.out.println(out + "  strays sent: " + sent.get());
            assertTrue(sent.get() > 0, "no strays were sent");
            Matcher m = Pattern.compile("subscriber \\d: received (\\d+), lost (\\d+).*foreign datagrams dropped (\\d+)")
                    .matcher(out);
            int subscribers = 0;
            long foreign = 0;
            while (m.find()) {
                subscribers++;
                assertEquals(2000, Long.parseLong(m.group(1)) + Long.parseLong(m.group(2)), out);
                assertTrue(Long.parseLong(m.group(1)) > 1000, "most ticks arrive: " + out);
                foreign += Long.parseLong(m.group(3));
            }
            assertEquals(2, subscribers, out);
            assertTrue(foreign > 0, "no stray reached a subscriber: " + out);
            assertEquals(0, status, out);
        } finally {
            running.set(false);
            if (strays != null) {
                strays.join(30_000);
            }
            hostile.disposeNow(Duration.ofSeconds(60));
        }
    }
}
