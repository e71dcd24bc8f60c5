package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/** {@link SharedReceiveAttackScenario} on the loopback device (raw peers on the same loopback stack). */
@Timeout(120)
class SharedReceiveAttackHostTest {
    private final LoopbackStack stack = LoopbackStack.create();
    private final SharedReceiveAttackScenario scenario = new SharedReceiveAttackScenario(new RdmaEngine(stack), stack,
            "127.0.0.1", Duration.ofSeconds(30), Duration.ofSeconds(1));

    @AfterEach
    void close() {
        try {
            scenario.close();
        } finally {
            stack.close();
        }
    }

    @Test
    void silentPeersStallOnlyTheirOwnConnections() {
        scenario.silentPeersStallOnlyTheirOwnConnections();
    }

    @Test
    void uncreditedSendsAreDroppedAndOthersKeepTheirReceives() {
        scenario.uncreditedSendsAreDroppedAndOthersKeepTheirReceives();
    }

    @Test
    void anHonestClientRidesOutAFloodWhileTheServerIsStalled() {
        scenario.anHonestClientRidesOutAFloodWhileTheServerIsStalled();
    }
}
