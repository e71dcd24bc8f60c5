package io.reactiverdma.reactive.impl;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/**
 * Isolation between the peers of one server on every stack ({@link PeerIsolationScenario} says how it is
 * attacked): {@link PeerIsolationLoopbackTest} runs it on the loopback device, which checks a type 2 window's
 * rkey against the QP it is bound to as rxe does; {@link PeerIsolationRxeTest} on rxe in the VM.
 */
abstract class PeerIsolationContract {
    private PeerIsolationScenario scenario;

    /** The engine under test, on the stack of the subclass. */
    protected abstract RdmaEngine engine();

    /** The address of the stack's device. */
    protected abstract String host();

    /** How long one step may take on this stack. */
    protected abstract Duration waitTime();

    /** How many checked messages each victim exchanges before and after the attacks. */
    protected abstract int messages();

    /** Called after the scenario closed its connections and server: checks the stack's resources where it can. */
    protected void assertConnectionResourcesReleased() {
    }

    /** The scenario of the running test, made on first use. */
    protected PeerIsolationScenario scenario() {
        if (scenario == null) {
            scenario = new PeerIsolationScenario(engine(), host(), waitTime());
        }
        return scenario;
    }

    /** Called after each test, after the scenario was closed: closes what the subclass opened. */
    protected void closeStack() {
    }

    @AfterEach
    void closeScenario() {
        try {
            if (scenario != null) {
                scenario.close();
            }
        } finally {
            closeStack();
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
        assertConnectionResourcesReleased();
    }
}
