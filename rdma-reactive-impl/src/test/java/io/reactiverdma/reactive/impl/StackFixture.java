package io.reactiverdma.reactive.impl;

import java.time.Duration;

/**
 * The stack a contract suite runs on, set up once per stack instead of in every suite's subclass: the engine
 * under test, the address of the stack's device, how long one step may take, what it can check after a test
 * and what it closes. {@link LoopbackStackFixture} (host build) and {@link RxeStackFixture} (rxe in the VM).
 */
abstract class StackFixture {
    /** The engine under test, on this stack. */
    abstract RdmaEngine engine();

    /** A further engine on this stack, for a test that shuts engines down (the caller shuts it down). */
    abstract RdmaEngine newEngine();

    /** The address of the stack's device. */
    abstract String host();

    /** How long one step may take on this stack. */
    abstract Duration waitTime();

    /**
     * Called after a test closed what it opened: waits until the connections' resources (protection domains
     * beyond the engine's, registrations, rdma_cm channels and ids) are released, where the stack can count
     * them (the loopback device can; rxe cannot, so it does nothing).
     */
    void assertConnectionResourcesReleased() {
    }

    /**
     * Called after a test shut down every engine it used: waits until the stack holds nothing of them, of any
     * kind, where it can count (the loopback device can; rxe cannot, so it does nothing).
     */
    void assertEverythingReleased() {
    }

    /** Called after each test, after the suite closed what it opened: closes what the fixture opened. */
    void close() {
    }
}
