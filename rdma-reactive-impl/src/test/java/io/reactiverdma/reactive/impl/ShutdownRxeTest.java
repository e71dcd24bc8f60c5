package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/** {@link ShutdownContract} on a real device (rxe in the VM). */
@Tag(RxeTestSupport.TAG)
class ShutdownRxeTest extends ShutdownContract {
    private final StackFixture stack = new RxeStackFixture(Duration.ofSeconds(30));

    @Override
    protected StackFixture stack() {
        return stack;
    }
}
