package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;

import java.time.Duration;
import java.util.Set;

/**
 * {@link ConnectionContract} on a real device (rxe in the VM), through the JNA layer. A connect to a port
 * nobody listens on may end as REJECTED, UNREACHABLE or CONNECT_ERROR, depending on how the kernel's rdma_cm
 * answers the request.
 */
@Tag(RxeTestSupport.TAG)
class ConnectionRxeTest extends ConnectionContract {
    private final StackFixture stack = new RxeStackFixture(Duration.ofSeconds(30));

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @Override
    protected StackFixture stack() {
        return stack;
    }

    @Override
    protected Set<ConnectionEvent.Type> nobodyListensReasons() {
        return Set.of(ConnectionEvent.Type.REJECTED, ConnectionEvent.Type.UNREACHABLE,
                ConnectionEvent.Type.CONNECT_ERROR);
    }
}
