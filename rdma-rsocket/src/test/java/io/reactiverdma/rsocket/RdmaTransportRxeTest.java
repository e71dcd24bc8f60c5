package io.reactiverdma.rsocket;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/**
 * {@link RdmaTransportSuite}, every frame whole, on rxe (the engine found by ServiceLoader). Tagged
 * "rxe-has-skips" as well: the suite has a disabled test (requestChannel256) and skips by assumption, which the
 * device run's no-skip rule counts as failures, so CI's device run leaves it out; run it with
 * {@code NATIVE_TESTS_WITH_SKIPS=1 scripts/native-tests --select-class io.reactiverdma.rsocket.RdmaTransportRxeTest}.
 */
@Tag(RxeTestSupport.TAG)
@Tag("rxe-has-skips")
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
