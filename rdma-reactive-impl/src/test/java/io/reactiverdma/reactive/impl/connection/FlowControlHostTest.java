package io.reactiverdma.reactive.impl.connection;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayDeque;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@link FlowControl} on its own: the slot and credit rules, and a simulation of two peers (a sender and a
 * receiver whose consumer requests and releases at random, with messages and credit updates in flight)
 * checking that no message ever arrives without a posted receive (no RNR) and that the exchange never
 * stalls; without credits the same schedules do hit RNR, so the check can fail.
 */
class FlowControlHostTest {

    @Test
    void aFullSendQueueBlocksOnSlotsAndACompletionFreesOne() {
        FlowControl f = new FlowControl(2, 8);
        assertEquals(FlowControl.Blocked.NO, f.blocked(false, 0));
        f.posted(false);
        f.posted(false);
        assertEquals(FlowControl.Blocked.SLOT, f.blocked(false, 0));
        f.sendCompleted();
        assertEquals(FlowControl.Blocked.NO, f.blocked(false, 0));
        assertEquals(1, f.sendSlotsFree());
        assertThrows(IllegalStateException.class, () -> {
            f.sendCompleted();
            f.sendCompleted();
        }, "more completions than posts is a bug, not something to absorb");
    }

    @Test
    void withCreditsOnlyMessagesWaitForThePeersReceives() {
        FlowControl f = new FlowControl(8, 8);
        f.useCredits(true);
        assertEquals(FlowControl.Blocked.CREDIT, f.blocked(true, 0), "the peer posted nothing yet");
        assertEquals(FlowControl.Blocked.NO, f.blocked(false, 0), "a WRITE/READ/atomic needs no receive");
        f.posted(true);
        assertEquals(1, f.sentMessages());
        assertEquals(FlowControl.Blocked.CREDIT, f.blocked(true, 1), "one posted, one sent");
        assertEquals(FlowControl.Blocked.NO, f.blocked(true, 2));
        FlowControl plain = new FlowControl(8, 8);
        assertEquals(FlowControl.Blocked.NO, plain.blocked(true, 0), "a plain peer: no credits, no waiting");
    }

    /**
     * Without credits (a plain peer, or credits off) the peer cannot see what is posted: every free buffer is
     * posted, demand or not, so its messages find receives; delivery still needs demand.
     */
    @Test
    void withoutCreditsEveryFreeBufferIsPostedAheadOfDemand() {
        FlowControl f = new FlowControl(8, 8);
        f.useCredits(false);
        assertEquals(8, f.receivesToPost(8, 0), "no demand, the whole window");
        f.receivesPosted(8);
        f.received();
        assertEquals(3, f.receivesToPost(3, 1), "released buffers go back at once");
        assertThrows(IllegalStateException.class, f::delivered, "delivery still needs demand");
        FlowControl credited = new FlowControl(8, 8);
        credited.useCredits(true);
        assertEquals(0, credited.receivesToPost(8, 0), "with credits: demand only");
    }

    @Test
    void receivesArePostedForUncoveredDemandIntoFreeBuffersOnly() {
        FlowControl f = new FlowControl(8, 8);
        assertEquals(0, f.receivesToPost(8, 0), "no demand, nothing posted");
        f.request(3);
        assertEquals(3, f.receivesToPost(8, 0));
        f.receivesPosted(3);
        assertEquals(0, f.receivesToPost(8, 0), "demand covered by posted receives");
        f.request(Long.MAX_VALUE);
        assertEquals(Long.MAX_VALUE, f.demand(), "saturates");
        assertEquals(5, f.receivesToPost(5, 0), "unbounded demand: bounded by the free buffers");
        f.received();
        assertEquals(4, f.receivesToPost(4, 1), "an undelivered message covers demand too");
        f.cancelDemand();
        assertEquals(0, f.receivesToPost(8, 0));
        assertThrows(IllegalStateException.class, f::delivered);
    }

    @Test
    void advertisementsBatchAQuarterOfTheQueueUnlessThePeerMayBeShort() {
        FlowControl f = new FlowControl(8, 16); // threshold 4
        assertFalse(f.shouldAdvertise(), "no credits agreed: never");
        f.useCredits(true);
        f.receivesPosted(2);
        assertTrue(f.shouldAdvertise(), "the peer has nothing: tell it at once");
        assertEquals(2, f.advertising());
        assertFalse(f.shouldAdvertise(), "one in flight at a time");
        f.advertisementCompleted();
        f.receivesPosted(8);
        assertTrue(f.shouldAdvertise());
        assertEquals(10, f.advertising());
        f.advertisementCompleted();
        f.receivesPosted(1);
        assertFalse(f.shouldAdvertise(), "peer has 10 advertised, none used: wait for a quarter");
        for (int i = 0; i < 7; i++) {
            f.received();
        }
        assertTrue(f.shouldAdvertise(), "peer has 3 left (< 4): one more receive is worth a write");
    }

    /** Two peers, one direction, random interleavings; returns the number of RNRs seen (fails on a stall). */
    private static int simulate(long seed, boolean credits, int messages, int sendDepth, int receiveDepth) {
        Random random = new Random(seed);
        FlowControl sender = new FlowControl(sendDepth, receiveDepth);
        FlowControl receiver = new FlowControl(sendDepth, receiveDepth);
        sender.useCredits(credits);
        receiver.useCredits(credits);
        long creditWord = 0;                 // the sender's copy of the receiver's advertised total
        ArrayDeque<Long> creditWrites = new ArrayDeque<>(); // in flight, in order (one at a time)
        int inFlight = 0;                    // messages on the wire, in order
        int acksPending = 0;                 // send completions not yet seen by the sender
        int sent = 0;
        int freeBuffers = receiveDepth;
        int undelivered = 0;
        int held = 0;                        // delivered, not yet released by the consumer
        int released = 0;
        int rnr = 0;
        for (long step = 0; released < messages; step++) {
            if (step > 5_000_000) {
                fail("stalled: seed " + seed + ", sent " + sent + ", released " + released);
            }
            switch (random.nextInt(7)) {
                case 0, 1 -> { // the sender posts the next message if the rules allow
                    if (sent < messages && sender.blocked(true, creditWord) == FlowControl.Blocked.NO) {
                        sender.posted(true);
                        sent++;
                        inFlight++;
                    }
                }
                case 2 -> { // the head message arrives
                    if (inFlight > 0 && receiver.postedReceives() == 0) {
                        rnr++; // the device NAKs (RNR) and the message is retried later
                    } else if (inFlight > 0) {
                        inFlight--;
                        acksPending++;
                        receiver.received();
                        undelivered++;
                        while (receiver.demand() > 0 && undelivered > 0) {
                            receiver.delivered();
                            undelivered--;
                            held++;
                        }
                    }
                }
                case 3 -> { // the sender sees a completion
                    if (acksPending > 0) {
                        acksPending--;
                        sender.sendCompleted();
                    }
                }
                case 4 -> { // the consumer asks for more (sometimes a lot)
                    receiver.request(random.nextInt(10) == 0 ? Long.MAX_VALUE : 1 + random.nextInt(4));
                    while (receiver.demand() > 0 && undelivered > 0) {
                        receiver.delivered();
                        undelivered--;
                        held++;
                    }
                }
                case 5 -> { // the consumer releases a message: its buffer is free again
                    if (held > 0) {
                        held--;
                        released++;
                        freeBuffers++;
                    }
                }
                default -> { // a credit write lands in the sender's word
                    if (!creditWrites.isEmpty()) {
                        creditWord = creditWrites.poll();
                        receiver.advertisementCompleted();
                    }
                }
            }
            // What the connection does after every event: post receives for demand, maybe advertise.
            int n = receiver.receivesToPost(freeBuffers, undelivered);
            freeBuffers -= n;
            receiver.receivesPosted(n);
            if (receiver.shouldAdvertise()) {
                creditWrites.add(receiver.advertising());
            }
            if (freeBuffers < 0) {
                fail("more receives posted than buffers");
            }
        }
        assertEquals(messages, sent);
        return rnr;
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 42, 1234})
    void withCreditsNoMessageEverFindsNoReceiveAndNothingStalls(long seed) {
        assertEquals(0, simulate(seed, true, 5_000, 4, 8));
        assertEquals(0, simulate(seed, true, 2_000, 16, 1));
        assertEquals(0, simulate(seed, true, 2_000, 1, 64));
    }

    @Test
    void withoutCreditsTheSameSchedulesHitRnr() {
        int total = 0;
        for (long seed = 1; seed <= 10; seed++) {
            total += simulate(seed, false, 2_000, 4, 8);
        }
        assertTrue(total > 0, "the simulation detects RNR when flow control is off");
    }
}
