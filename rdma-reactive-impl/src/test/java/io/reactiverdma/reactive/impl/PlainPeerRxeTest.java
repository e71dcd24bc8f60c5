package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PlainPeerScenario} on rxe: a raw-verbs plain peer (no private data, rnr_retry 0 where an RNR must
 * not happen) against the engine's server. The request/response time is printed (the number in
 * docs/flow-control.md, "Plain peers"); before the receive window and MIN_RNR_TIMER each request waited one
 * RNR NAK at rdma_cm's 655 ms.
 */
@Tag(RxeTestSupport.TAG)
class PlainPeerRxeTest {
    private final JnaRdmaStack stack = new JnaRdmaStack();
    private PlainPeerScenario scenario;

    private PlainPeerScenario scenario() {
        scenario = new PlainPeerScenario(new RdmaEngine(stack), stack, RxeResources.requireDevice(), RxeResources.WAIT);
        return scenario;
    }

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    @Test
    void aPlainPeersBackToBackMessagesMeetNoRnrAndArriveInOrderWhileTheHandlerTakesOneAtATime() {
        scenario().backToBackMessagesAreAllDeliveredInOrder(32);
    }

    /** 50 requests, each sent when the previous response arrived; the peer waits out RNRs (rnr_retry 6). */
    @Test
    void aPlainPeersRequestsBackToBackWaitForNoRnrTimer() {
        double us = scenario().requestsBackToBack(50, 6);
        System.out.printf("plain peer, echo server on rxe: %.0f us per request (50 requests back to back)%n", us);
        assertTrue(us < 100_000, us + " us per request: an RNR wait at rdma_cm's 655 ms timer is in there");
    }
}
