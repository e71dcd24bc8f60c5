package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/**
 * {@link SharedReceiveQueueContract} on a real device (rxe in the VM) with 1,000 connections and an SRQ of
 * 2,000 buffers (twice the connections: docs/server-guide.md says why); the numbers and times it prints ({@code SRQ-MEASURE}) are the ones in docs/server-guide.md.
 */
@Tag(RxeTestSupport.TAG)
class SharedReceiveQueueRxeTest extends SharedReceiveQueueContract {
    private final StackFixture stack = new RxeStackFixture(Duration.ofMinutes(3));

    @Override
    protected StackFixture stack() {
        return stack;
    }

    @Override
    protected int connections() {
        return 1000;
    }

    @Override
    protected int srqDepth() {
        return 2000;
    }
}
