package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;

import java.time.Duration;

/**
 * {@link RdmaTransportSuite}, every frame whole, on rxe, through the public factories
 * ({@link RdmaClientTransport#create}, {@link RdmaServerTransport#create}) and the engine found by
 * ServiceLoader.
 */
@Tag(RxeTestSupport.TAG)
class RdmaTransportRxeTest extends RdmaTransportSuite {
    @Override
    String host() {
        RxeTestSupport.requireDevice();
        return RxeTestSupport.deviceAddress();
    }

    @Override
    RdmaClientTransport client(RdmaTransportConfig config) {
        return RdmaClientTransport.create(publicClient(config));
    }

    @Override
    RdmaServerTransport server(RdmaTransportConfig config) {
        return RdmaServerTransport.create(publicServer(config));
    }

    @Override
    void shutdown() {
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

    static RdmaClient publicClient(RdmaTransportConfig config) {
        return RdmaClient.create().host(config.host()).port(config.port())
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, config.option(RdmaOption.RECEIVE_BUFFER_SIZE))
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, config.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
    }

    static RdmaServer publicServer(RdmaTransportConfig config) {
        return RdmaServer.create().host(config.host()).port(config.port())
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, config.option(RdmaOption.RECEIVE_BUFFER_SIZE))
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, config.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
    }
}
