package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

/** {@link HandlerEndContract} on rxe. */
@Tag(RxeTestSupport.TAG)
class HandlerEndRxeTest extends HandlerEndContract {
    private final StackFixture stack = new RxeStackFixture(RxeResources.WAIT);

    @Override
    StackFixture stack() {
        return stack;
    }
}
