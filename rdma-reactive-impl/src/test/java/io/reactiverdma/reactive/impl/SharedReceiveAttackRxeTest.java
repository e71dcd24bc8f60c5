package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/**
 * {@link SharedReceiveAttackScenario} on rxe: the engine's server and honest clients on rdma-core, the raw
 * peers on a second rdma-core stack in the same JVM (their own rdma_cm channels, PDs and QPs).
 */
@Tag(RxeTestSupport.TAG)
class SharedReceiveAttackRxeTest {
    private SharedReceiveAttackScenario scenario;

    private SharedReceiveAttackScenario scenario() {
        scenario = new SharedReceiveAttackScenario(new RdmaEngine(), new JnaRdmaStack(), RxeResources.requireDevice(),
                RxeResources.WAIT, Duration.ofSeconds(5));
        return scenario;
    }

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    @Test
    void silentPeersStallOnlyTheirOwnConnections() {
        scenario().silentPeersStallOnlyTheirOwnConnections();
    }

    @Test
    void uncreditedSendsAreDroppedAndOthersKeepTheirReceives() {
        scenario().uncreditedSendsAreDroppedAndOthersKeepTheirReceives();
    }

    @Test
    void anHonestClientRidesOutAFloodWhileTheServerIsStalled() {
        scenario().anHonestClientRidesOutAFloodWhileTheServerIsStalled();
    }
}
