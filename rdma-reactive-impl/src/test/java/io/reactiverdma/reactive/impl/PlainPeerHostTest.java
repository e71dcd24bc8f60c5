package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PlainPeerScenario} on the loopback device. Its RNR delay stands for rdma_cm's default minimum RNR
 * timer (655 ms on hardware, longer here); the stack counts every RNR wait, so "none" is checked too. As
 * with rdma_cm, a QP's rnr_retry_count is the one its peer put in its connection parameters.
 */
@Timeout(60)
class PlainPeerHostTest {
    private final LoopbackStack stack = LoopbackStack.builder().device("loopback0", "127.0.0.1")
            .rnrDelay(Duration.ofSeconds(2)).build();
    private final PlainPeerScenario scenario = new PlainPeerScenario(new RdmaEngine(stack), stack, "127.0.0.1",
            Duration.ofSeconds(10));

    @AfterEach
    void close() {
        try {
            scenario.close();
        } finally {
            stack.close();
        }
    }

    @Test
    void aPlainPeersBackToBackMessagesMeetNoRnrAndArriveInOrderWhileTheHandlerTakesOneAtATime() {
        scenario.backToBackMessagesAreAllDeliveredInOrder(32);
        assertEquals(0, stack.rnrWaits(), "RNR waits");
    }

    /**
     * Where an RNR still happens (the peer sends beyond the window: 16 messages, 2 receive buffers), each retry
     * waits this side's MIN_RNR_TIMER (0.64 ms), not rdma_cm's 655 ms (the stack's rnrDelay, 2 s here: a
     * single wait at that timer would take longer than the bound). Loopback only: rxe's retries are measured
     * in {@code PlainPeerRxeTest}.
     */
    @Test
    void anRnrBeyondTheWindowWaitsTheMinRnrTimerNotRdmaCmsDefault() {
        long ms = scenario.backToBackBeyondTheWindow(16, 2);
        assertTrue(stack.rnrWaits() > 0, "the peer sent beyond the window: some sends met RNR");
        assertTrue(ms < 2000, "16 messages took " + ms + " ms with " + stack.rnrWaits() + " RNR waits");
    }

    @Test
    void aPlainPeersRequestsBackToBackMeetNoRnr() {
        scenario.requestsBackToBack(50, 0);
        assertEquals(0, stack.rnrWaits(), "RNR waits");
    }
}
