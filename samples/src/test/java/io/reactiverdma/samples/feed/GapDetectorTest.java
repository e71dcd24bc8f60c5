package io.reactiverdma.samples.feed;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class GapDetectorTest {
    @Test
    void inOrderIsNoLoss() {
        GapDetector d = new GapDetector();
        for (long s = 0; s < 5; s++) {
            d.onSequence(s);
        }
        d.finish(5);
        assertEquals(5, d.received());
        assertEquals(0, d.lost());
        assertEquals(0, d.gaps());
    }

    @Test
    void jumpsCountLostGapsAndTheMissingTail() {
        GapDetector d = new GapDetector();
        d.onSequence(0);
        d.onSequence(3); // 1, 2 lost
        d.onSequence(4);
        d.onSequence(7); // 5, 6 lost
        d.finish(10); // 8, 9 lost
        assertEquals(4, d.received());
        assertEquals(6, d.lost());
        assertEquals(3, d.gaps());
    }

    @Test
    void aLateArrivalMovesFromLostToReordered() {
        GapDetector d = new GapDetector();
        d.onSequence(0);
        d.onSequence(2);
        d.onSequence(1);
        d.finish(3);
        assertEquals(0, d.lost());
        assertEquals(1, d.reordered());
    }

    @Test
    void ticksRoundTripAndShortMessagesAreRefused() {
        Tick t = new Tick(123456789L, 42, 100_250_000L);
        ByteBuffer b = t.encode(7, 64);
        assertEquals(64, b.remaining());
        assertEquals(t, Tick.decode(b, 7));
        assertThrows(NotATickException.class, () -> Tick.decode(ByteBuffer.allocate(Tick.SIZE - 1), 7));
    }

    @Test
    void optionsAreParsedAndBadOnesRefused() {
        FeedOptions o = FeedOptions.parse(new String[] {"demo", "-n", "100", "--subscribers", "3", "-s", "40",
                "--max-loss", "2.5"});
        assertEquals(100, o.count());
        assertEquals(3, o.subscribers());
        assertEquals(40, o.size());
        assertEquals(2.5, o.maxLossPercent());
        assertThrows(io.reactiverdma.samples.common.UsageException.class,
                () -> FeedOptions.parse(new String[] {"demo", "--max-loss", "101"}));
        assertThrows(io.reactiverdma.samples.common.UsageException.class,
                () -> FeedOptions.parse(new String[] {"demo", "-s", "4"}));
        assertThrows(io.reactiverdma.samples.common.UsageException.class,
                () -> FeedOptions.parse(new String[] {"publish"}));
    }
}
