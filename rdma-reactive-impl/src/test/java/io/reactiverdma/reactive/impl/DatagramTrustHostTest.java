package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DatagramTrustScenario} on the loopback device, which also counts the address handles themselves
 * (rxe shows only the engine's metric).
 */
@Timeout(120)
class DatagramTrustHostTest {
    private static final Duration WAIT = Duration.ofSeconds(15);
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private final DatagramTrustScenario scenario = new DatagramTrustScenario(engine, "10.77.0.1", WAIT);

    @AfterEach
    void close() {
        try {
            scenario.close();
            engine.shutdown().block(WAIT);
            stack.resources().awaitReleased(WAIT);
            assertEquals(0, stack.liveAddressHandles(), "address handles left");
        } finally {
            stack.close();
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
        scenario.repliesToManySendersKeepTheAddressHandlesBounded(12, 4, stack::liveAddressHandles);
        assertTrue(stack.liveAddressHandles() <= 4, "live address handles: " + stack.liveAddressHandles());
    }

    @Test
    void sendsToManyPeersKeepTheAddressHandlesBounded() {
        scenario.sendsToManyPeersKeepTheAddressHandlesBounded(10, 3);
        assertTrue(stack.liveAddressHandles() <= 3, "live address handles: " + stack.liveAddressHandles());
    }

    @Test
    void aPeerThatRestartsOnTheSameAddressIsReachedAgain() {
        scenario.aPeerThatRestartsIsReachedAgain(Duration.ofMillis(100));
    }

    @Test
    void aClosedEndpointFailsWithConnectionClosedException() {
        scenario.aClosedEndpointFailsWithConnectionClosedException();
    }
}
