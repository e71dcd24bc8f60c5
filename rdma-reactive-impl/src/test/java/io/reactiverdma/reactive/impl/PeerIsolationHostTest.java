package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/**
 * {@link PeerIsolationScenario} on the loopback device, which checks a type 2 window's rkey against the QP
 * it is bound to as rxe does.
 */
@Timeout(60)
class PeerIsolationHostTest {
    private final LoopbackStack stack = LoopbackStack.create();
    private final PeerIsolationScenario scenario = new PeerIsolationScenario(new RdmaEngine(stack), "127.0.0.1",
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
    void aClientCannotWriteAnotherClientsCreditWordAndTheOthersAreStillServed() {
        scenario.run(50);
    }
}
