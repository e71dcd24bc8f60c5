package io.reactiverdma.rsocket;

import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link RdmaTransportSuite}, every frame whole, on the loopback device (the real engine in this JVM). */
class RdmaTransportHostTest extends RdmaTransportSuite {
    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    @Override
    String host() {
        return rdma.host();
    }

    @Override
    boolean fragmented() {
        return false;
    }
}
