package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import java.time.Duration;

/** {@link RSocketFailureScenario} on rxe, through the public factories. */
@Tag(RxeTestSupport.TAG)
class RSocketFailureRxeTest {
    private RSocketFailureScenario scenario;

    @BeforeEach
    void start() {
        RxeTestSupport.requireDevice();
        scenario = new RSocketFailureScenario(RxeTestSupport.deviceAddress(), Duration.ofMinutes(2)) {
            @Override
            Mono<RdmaConnection> connect(RdmaTransportConfig config) {
                return RdmaTransportRxeTest.publicClient(config).connect();
            }

            @Override
            RdmaClientTransport client(RdmaTransportConfig config) {
                return RdmaClientTransport.create(RdmaTransportRxeTest.publicClient(config));
            }

            @Override
            RdmaServerTransport server(RdmaTransportConfig config) {
                return RdmaServerTransport.create(RdmaTransportRxeTest.publicServer(config));
            }
        };
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
