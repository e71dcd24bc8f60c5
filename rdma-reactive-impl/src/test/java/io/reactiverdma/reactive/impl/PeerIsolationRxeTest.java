package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;


/** {@link PeerIsolationContract} on rxe: the device enforces the windows' binding to their QP. */
@Tag(RxeTestSupport.TAG)
class PeerIsolationRxeTest extends PeerIsolationContract {
    private final StackFixture stack = new RxeStackFixture(RxeResources.WAIT);

    @Override
    protected StackFixture stack() {
        return stack;
    }

    @Override
    protected int messages() {
        return 20;
    }
}
