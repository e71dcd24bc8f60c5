package io.reactiverdma.reactive.impl;

import java.time.Duration;

/**
 * The real device (rxe in the VM) through rdma-core, with one engine shared by every test of the JVM (as an
 * application has); {@link #host()} fails the test loudly when no device is present (never skips).
 */
final class RxeStackFixture extends StackFixture {
    private static final RdmaEngine ENGINE = new RdmaEngine();
    private final Duration wait;

    RxeStackFixture(Duration wait) {
        this.wait = wait;
    }

    @Override
    RdmaEngine engine() {
        return ENGINE;
    }

    @Override
    RdmaEngine newEngine() {
        return new RdmaEngine();
    }

    @Override
    String host() {
        return RxeResources.requireDevice();
    }

    @Override
    Duration waitTime() {
        return wait;
    }
}
