package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;

/** {@link HandlerEndContract} on the loopback device. */
@Timeout(60)
class HandlerEndHostTest extends HandlerEndContract {
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);

    @Override
    RdmaEngine engine() {
        return engine;
    }

    @Override
    String host() {
        return "127.0.0.1";
    }

    @Override
    Duration waitBound() {
        return Duration.ofSeconds(15);
    }

    @Override
    void closeStack() {
        stack.close();
    }
}
