package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The device's registry of QP owners (for async QP errors) against reused QP numbers. */
class DeviceResourcesHostTest {
    private final LoopbackStack stack = LoopbackStack.create();
    private final DeviceResources device = new DeviceResources(stack.devices().get(0));

    @AfterEach
    void close() {
        try {
            device.close();
        } finally {
            stack.close();
        }
    }

    /**
     * A closing connection unregisters its QP number on its poller after the rdma_cm thread destroyed the QP;
     * by then a new connection may have a QP with the same number (rxe reuses them cyclically). The old
     * owner's unregister must leave the new owner in place, or the new connection's QP_FATAL would close
     * nothing.
     */
    @Test
    void anOldOwnersUnregisterLeavesTheNewOwnerOfAReusedQpNumber() {
        QueuePairOwner old = type -> { };
        QueuePairOwner reused = type -> { };
        device.register(17, old);
        device.register(17, reused); // the number came back for a new connection
        device.unregister(17, old);
        assertSame(reused, device.ownerOf(17));
        device.unregister(17, reused);
        assertNull(device.ownerOf(17));
    }
}
