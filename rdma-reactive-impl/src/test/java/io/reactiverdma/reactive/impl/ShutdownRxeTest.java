package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/** {@link ShutdownContract} on a real device (rxe in the VM). */
@Tag(RxeTestSupport.TAG)
class ShutdownRxeTest extends ShutdownContract {
    @Override
    protected RdmaEngine newEngine() {
        return new RdmaEngine();
    }

    @Override
    protected String host() {
        return RxeResources.requireDevice();
    }

    @Override
    protected Duration waitTime() {
        return Duration.ofSeconds(30);
    }
}
