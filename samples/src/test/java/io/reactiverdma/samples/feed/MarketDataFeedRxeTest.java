package io.reactiverdma.samples.feed;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

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
}
