package io.reactiverdma.rsocket;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;

/** {@link RSocketFailureScenario} on rxe (the engine found by ServiceLoader). */
@Tag(RxeTestSupport.TAG)
class RSocketFailureRxeTest {
    private RSocketFailureScenario scenario;

    @BeforeEach
    void start() {
        RxeTestSupport.requireDevice();
        scenario = new RSocketFailureScenario(RxeTestSupport.deviceAddress(), Duration.ofMinutes(2));
        scenario.start();
    }

    @AfterEach
    void close() {
        if (scenario != null) {
            scenario.close();
        }
    }

    @Test
    void aMalformedFrameEndsThatConnectionWithAnErrorFrameAndTheServerServesOthers() {
        scenario.malformedFrameEndsThatConnectionWithAnErrorFrame();
    }

    @Test
    void aFrameAboveThePeersLimitEndsTheConnectionWithANamedErrorAndTheServerServesOthers() {
        scenario.frameAboveThePeersLimitEndsTheConnectionWithANamedError();
    }
}
