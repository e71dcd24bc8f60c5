package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;

import java.time.Duration;

/** {@link RSocketFailureScenario} on the loopback device. */
@Timeout(120)
class RSocketFailureHostTest {
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);
    private final RSocketFailureScenario scenario = new RSocketFailureScenario("127.0.0.1", Duration.ofSeconds(30)) {
        @Override
        Mono<RdmaConnection> connect(RdmaTransportConfig config) {
            return engine.connect(config);
        }

        @Override
        RdmaClientTransport client(RdmaTransportConfig config) {
            return RdmaTransportHostTest.loopbackClient(engine, config);
        }

        @Override
        RdmaServerTransport server(RdmaTransportConfig config) {
            return RdmaTransportHostTest.loopbackServer(engine, config);
        }
    };

    @BeforeEach
    void start() {
        scenario.start();
    }

    @AfterEach
    void close() {
        try {
            scenario.close();
        } finally {
            try {
                engine.shutdown().block(Duration.ofSeconds(30));
            } finally {
                stack.close();
            }
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
