package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link IdlePeerProbeScenario} on the loopback device, whose "dead host" fault (a host that neither answers
 * nor tells: no DISCONNECTED) makes the survivor's probe end in RETRY_EXC_ERR after (RETRY_COUNT + 1) scaled
 * ACK timeouts of 2 ms. Two engines of one stack play the two hosts.
 */
@Timeout(120)
class IdlePeerProbeHostTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration INTERVAL = Duration.ofMillis(200);

    private final LoopbackStack stack = LoopbackStack.create();
    private final IdlePeerProbeScenario scenario = new IdlePeerProbeScenario(new RdmaEngine(stack),
            new RdmaEngine(stack), "127.0.0.1", WAIT, INTERVAL);

    @AfterEach
    void tearDown() {
        try {
            scenario.close();
        } finally {
            stack.close();
        }
    }

    private LoopbackCmId clientId() {
        for (LoopbackCmId id : stack.liveIds()) {
            if (!id.isConnectRequest() && id.queuePair() != null) {
                return id;
            }
        }
        throw new AssertionError("no client id");
    }

    /** The server side's QP: the probes it posts are counted there. */
    private LoopbackQueuePair serverQp() {
        for (LoopbackCmId id : stack.passiveIds()) {
            if (id.queuePair() != null) {
                return id.queuePair();
            }
        }
        throw new AssertionError("no server QP");
    }

    @Test
    void aLiveIdlePeerIsProbedAndUndisturbed() {
        scenario.aLiveIdlePeerIsProbedAndUndisturbed(() -> serverQp().sendRequestsPosted(), 3);
    }

    @Test
    void withTheProbeOffAnIdleConnectionSendsNothing() throws InterruptedException {
        scenario.withTheProbeOffAnIdleConnectionSendsNothing(() -> serverQp().sendRequestsPosted());
    }

    @Test
    void aDeadIdlePeerIsDetectedWithinTheBoundAndReleased() {
        Duration retryBound = Duration.ofMillis(2).multipliedBy(7); // (RETRY_COUNT 6 + 1) x 2 ms
        Duration detected = scenario.aDeadIdlePeerIsDetectedWithinTheBound(
                () -> stack.faults().dropHost(clientId()), retryBound, Duration.ofSeconds(5));
        assertTrue(detected.compareTo(INTERVAL.multipliedBy(5).dividedBy(4).plus(retryBound).plus(Duration.ofSeconds(5))) <= 0,
                "detected after " + detected);
    }
}
