package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/**
 * {@link IdlePeerProbeScenario}'s probe deadline on the loopback device with an ACK timeout of 30 s, so the
 * dead host's retry bound (7 x 30 s) is far longer than the probe interval, as on rxe when a plain
 * librdmacm peer connected with its default RETRY_COUNT 7 (rxe: retry forever; measured on two hosts: the
 * probe alone never failed). Loopback only: a host cannot die in one VM. Without credits, as a plain peer:
 * a credit update still retrying when the peer dies would be posted work, which the probe leaves to the
 * transport's own (here long) retry bound.
 */
@Timeout(120)
class IdlePeerProbeDeadlineHostTest {
    private static final Duration INTERVAL = Duration.ofMillis(300);

    private final LoopbackStack stack = LoopbackStack.builder().device("loopback0", "127.0.0.1")
            .ackTimeout(Duration.ofSeconds(30)).build();
    private final IdlePeerProbeScenario scenario = new IdlePeerProbeScenario(new RdmaEngine(stack),
            new RdmaEngine(stack), "127.0.0.1", Duration.ofSeconds(10), INTERVAL).withoutCredits();

    @AfterEach
    void tearDown() {
        try {
            scenario.close();
        } finally {
            stack.close();
        }
    }

    @Test
    void aDeadIdlePeerWhoseTransportRetriesLongerIsClosedByTheProbesDeadline() {
        scenario.aDeadIdlePeerIsDetectedByTheProbesDeadline(() -> {
            for (LoopbackCmId id : stack.liveIds()) {
                if (!id.isConnectRequest() && id.queuePair() != null) {
                    stack.faults().dropHost(id);
                    return;
                }
            }
            throw new AssertionError("no client id");
        }, Duration.ofSeconds(10)); // the close itself may take the drain timeout (5 s): the probe is still retrying
    }
}
