package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

import java.time.Duration;

/**
 * A fresh loopback device and engine (one per test instance, so per test), at 127.0.0.1 unless given another
 * stack and address; after a test it
 * checks that nothing is left but what the engine keeps per device ({@code engineKeeps}; at most one protection
 * domain and one rdma_cm channel) and that no completion queue overflowed, and closes the device.
 */
final class LoopbackStackFixture extends StackFixture {
    private final LoopbackStack stack;
    private final RdmaEngine engine;
    private final String host;
    private final Duration wait;
    private final Kind[] engineKeeps;

    /** {@code engineKeeps}: the kinds of resource the engine may keep after a test (not counted as left). */
    LoopbackStackFixture(Duration wait, Kind... engineKeeps) {
        this(LoopbackStack.create(), "127.0.0.1", wait, engineKeeps);
    }

    /** On {@code stack} (a device mode of a test's own), whose device answers at {@code host}. */
    LoopbackStackFixture(LoopbackStack stack, String host, Duration wait, Kind... engineKeeps) {
        this.stack = stack;
        this.engine = new RdmaEngine(stack);
        this.host = host;
        this.wait = wait;
        this.engineKeeps = engineKeeps.clone();
    }

    /** The device, for a loopback-only test's fault injection and resource counts. */
    LoopbackStack stack() {
        return stack;
    }

    @Override
    RdmaEngine engine() {
        return engine;
    }

    @Override
    RdmaEngine newEngine() {
        return new RdmaEngine(stack);
    }

    @Override
    String host() {
        return host;
    }

    @Override
    Duration waitTime() {
        return wait;
    }

    @Override
    void assertConnectionResourcesReleased() {
        stack.awaitReleasedButDeviceWatches(wait, engineKeeps); // a watch is kept with the device's resources
        if (stack.resources().count(Kind.PROTECTION_DOMAIN) > 1 || stack.resources().count(Kind.CM_CHANNEL) > 1
                || stack.cqOverflows() != 0) {
            throw new AssertionError("left after the test: " + stack.resources().count(Kind.PROTECTION_DOMAIN)
                    + " protection domains, " + stack.resources().count(Kind.CM_CHANNEL) + " rdma_cm channels (the"
                    + " engine's one each at most), " + stack.cqOverflows() + " completion queue overflows");
        }
    }

    /** No kind of resource ignored: PDs, registrations, CQs, QPs, ids, channels, address handles. */
    @Override
    void assertEverythingReleased() {
        stack.resources().awaitReleased(wait);
        if (stack.liveAddressHandles() != 0) {
            throw new AssertionError(stack.liveAddressHandles() + " address handles left");
        }
    }

    @Override
    void close() {
        stack.close();
    }
}
