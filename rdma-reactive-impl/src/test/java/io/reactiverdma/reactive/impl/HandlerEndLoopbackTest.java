package io.reactiverdma.reactive.impl;

import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/** {@link HandlerEndContract} on the loopback device. */
@Timeout(60)
class HandlerEndLoopbackTest extends HandlerEndContract {
    private final StackFixture stack = new LoopbackStackFixture(Duration.ofSeconds(15));

    @Override
    StackFixture stack() {
        return stack;
    }
}
