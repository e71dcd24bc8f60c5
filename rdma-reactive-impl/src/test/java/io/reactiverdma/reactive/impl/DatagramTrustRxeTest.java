package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** {@link DatagramTrustScenario} on rxe: the real UD path, its address handles counted by the engine's metric. */
@Tag(RxeTestSupport.TAG)
class DatagramTrustRxeTest {
    private final RdmaEngine engine = new RdmaEngine();
    private DatagramTrustScenario scenario;

    @BeforeEach
    void requireDevice() {
        scenario = new DatagramTrustScenario(engine, RxeResources.requireDevice(), RxeResources.WAIT);
    }

    @AfterEach
    void close() {
        try {
            if (scenario != null) {
                scenario.close();
            }
        } finally {
            engine.shutdown().block(RxeResources.WAIT);
        }
    }

    @Test
    void receiveBuffersComeBackWhenASubscriberCancelsWithDatagramsQueued() {
        scenario.cancellingWithDatagramsQueuedGivesTheirBuffersBack(false);
    }

    @Test
    void groupBuffersComeBackWhenASubscriberCancelsWithDatagramsQueued() {
        scenario.cancellingWithDatagramsQueuedGivesTheirBuffersBack(true);
    }

    @Test
    void aReleasedDatagramCannotBeRead() {
        scenario.aReleasedDatagramCannotBeRead();
    }

    @Test
    void repliesToManySendersKeepTheAddressHandlesBounded() {
        scenario.repliesToManySendersKeepTheAddressHandlesBounded(10, 3, null);
    }

    @Test
    void sendsToManyPeersKeepTheAddressHandlesBounded() {
        scenario.sendsToManyPeersKeepTheAddressHandlesBounded(6, 2);
    }

    @Test
    void aPeerThatRestartsOnTheSameAddressIsReachedAgain() {
        scenario.aPeerThatRestartsIsReachedAgain(Duration.ofMillis(500));
    }

    @Test
    void aClosedEndpointFailsWithConnectionClosedException() {
        scenario.aClosedEndpointFailsWithConnectionClosedException();
    }
}
