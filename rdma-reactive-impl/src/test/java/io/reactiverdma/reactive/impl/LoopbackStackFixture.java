package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

import java.time.Duration;

/**
 * A fresh loopback device and engine (one per test instance, so per test), at 127.0.0.1; after a test it
 * checks that nothing is left but what the engine keeps per device ({@code engineKeeps}; at most one protection
 * domain and one rdma_cm channel) and that no completion queue overflowed, and closes the device.
 */
final class LoopbackStackFixture extends StackFixture {
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private final Duration wait;
    private final Kind[] engineKeeps;

    /** {@code engineKeeps}: the kinds of resource the engine may keep after a test (not counted as left). */
    LoopbackStackFixture(Duration wait, Kind... engineKeeps) {
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
    String host() {
        return "127.0.0.1";
    }

    @Override
    Duration waitTime() {
        return wait;
    }

    @Override
    void assertConnectionResourcesReleased() {
        stack.resources().awaitReleased(wait, engineKeeps);
        if (stack.resources().count(Kind.PROTECTION_DOMAIN) > 1 || stack.resources().count(Kind.CM_CHANNEL) > 1
                || stack.cqOverflows() != 0) {
            throw new AssertionError("left after the test: " + stack.resources().count(Kind.PROTECTION_DOMAIN)
                    + " protection domains, " + stack.resources().count(Kind.CM_CHANNEL) + " rdma_cm channels (the"
                    + " engine's one each at most), " + stack.cqOverflows() + " completion queue overflows");
        }
    }

    @Override
    void close() {
        stack.close();
    }
}
