package io.reactiverdma.reactive.impl;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/** {@link PeerIsolationContract} on rxe: the device enforces the windows' binding to their QP. */
@Tag(RxeTestSupport.TAG)
class PeerIsolationRxeTest extends PeerIsolationContract {
    private static final RdmaEngine ENGINE = new RdmaEngine();

    @Override
    protected RdmaEngine engine() {
        return ENGINE;
    }

    @Override
    protected String host() {
        return RxeResources.requireDevice();
    }

    @Override
    protected Duration waitTime() {
        return RxeResources.WAIT;
    }

    @Override
    protected int messages() {
        return 20;
    }
}
