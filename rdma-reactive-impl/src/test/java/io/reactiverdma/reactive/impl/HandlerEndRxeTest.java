package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/** {@link HandlerEndContract} on rxe. */
@Tag(RxeTestSupport.TAG)
class HandlerEndRxeTest extends HandlerEndContract {
    private final RdmaEngine engine = new RdmaEngine();

    @Override
    RdmaEngine engine() {
        return engine;
    }

    @Override
    String host() {
        return RxeResources.requireDevice();
    }

    @Override
    Duration waitBound() {
        return RxeResources.WAIT;
    }
}
