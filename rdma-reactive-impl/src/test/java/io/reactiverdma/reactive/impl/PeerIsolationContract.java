package io.reactiverdma.reactive.impl;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;


/**
 * Isolation between the peers of one server on every stack ({@link PeerIsolationScenario} says how it is
 * attacked): {@link PeerIsolationLoopbackTest} runs it on the loopback device, which checks a type 2 window's
 * rkey against the QP it is bound to as rxe does; {@link PeerIsolationRxeTest} on rxe in the VM.
 */
abstract class PeerIsolationContract {
    private PeerIsolationScenario scenario;

    /** The stack under test (its engine, device address, step time, resource check and close). */
    protected abstract StackFixture stack();

    /** How many checked messages each victim exchanges before and after the attacks. */
    protected abstract int messages();

    /** The scenario of the running test, made on first use. */
    protected PeerIsolationScenario scenario() {
        if (scenario == null) {
            scenario = new PeerIsolationScenario(stack().engine(), stack().host(), stack().waitTime());
        }
        return scenario;
    }

    @AfterEach
    void closeScenario() {
        try {
            if (scenario != null) {
                scenario.close();
            }
        } finally {
            stack().close();
        }
    }

    @Test
    void aClientCannotWriteAnotherClientsCreditWordAndTheOthersAreStillServed() {
        scenario().run(messages());
    }

    @Test
    void aRegionIsExposedToOneConnectionOnlyAndRevocable() {
        scenario().runExposed();
        scenario.close();
        scenario = null;
        stack().assertConnectionResourcesReleased();
    }
}
