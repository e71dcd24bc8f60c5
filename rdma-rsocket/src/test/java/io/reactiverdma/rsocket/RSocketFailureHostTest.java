package io.reactiverdma.rsocket;

import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

/** {@link RSocketFailureScenario} on the loopback device. */
@Timeout(120)
class RSocketFailureHostTest {
    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    private RSocketFailureScenario scenario;

    @BeforeEach
    void start() {
        scenario = new RSocketFailureScenario(rdma.host(), Duration.ofSeconds(30));
        scenario.start();
    }

    @AfterEach
    void close() {
        scenario.close();
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
