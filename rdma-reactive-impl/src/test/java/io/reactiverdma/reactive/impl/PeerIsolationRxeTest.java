package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@link PeerIsolationScenario} on rxe: the device enforces the windows' binding to their QP. */
@Tag(RxeTestSupport.TAG)
class PeerIsolationRxeTest {
    private final RdmaEngine engine = new RdmaEngine();
    private PeerIsolationScenario scenario;

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    @Test
    void aClientCannotWriteAnotherClientsCreditWordAndTheOthersAreStillServed() {
        scenario = new PeerIsolationScenario(engine, RxeResources.requireDevice(), RxeResources.WAIT);
        scenario.run(20);
    }

    @Test
    void aRegionIsExposedToOneConnectionOnlyAndRevocable() {
        scenario = new PeerIsolationScenario(engine, RxeResources.requireDevice(), RxeResources.WAIT);
        scenario.runExposed();
    }
}
