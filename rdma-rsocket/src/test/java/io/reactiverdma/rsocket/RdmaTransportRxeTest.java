package io.reactiverdma.rsocket;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/** {@link RdmaTransportSuite}, every frame whole, on rxe (the engine found by ServiceLoader). */
@Tag(RxeTestSupport.TAG)
class RdmaTransportRxeTest extends RdmaTransportSuite {
    @Override
    String host() {
        RxeTestSupport.requireDevice();
        return RxeTestSupport.deviceAddress();
    }

    @Override
    boolean fragmented() {
        return false;
    }

    /** Everything is 10-50x slower under emulation. */
    @Override
    public Duration getTimeout() {
        return Duration.ofMinutes(10);
    }
}
