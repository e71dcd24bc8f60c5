package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

import java.time.Duration;

/** {@link RdmaTransportSuite}, every frame whole, on the loopback device (the real engine in this JVM). */
class RdmaTransportHostTest extends RdmaTransportSuite {
    private final LoopbackStack stack = LoopbackStack.create();
    private final RdmaEngine engine = new RdmaEngine(stack);

    @Override
    String host() {
        return "127.0.0.1";
    }

    @Override
    RdmaClientTransport client(RdmaTransportConfig config) {
        return loopbackClient(engine, config);
    }

    @Override
    RdmaServerTransport server(RdmaTransportConfig config) {
        return loopbackServer(engine, config);
    }

    @Override
    void shutdown() {
        try {
            engine.shutdown().block(Duration.ofSeconds(30));
        } finally {
            stack.close();
        }
    }

    @Override
    boolean fragmented() {
        return false;
    }

    static RdmaClientTransport loopbackClient(RdmaEngine engine, RdmaTransportConfig config) {
        return new DefaultRdmaClientTransport(() -> engine.connect(config),
                config.option(RdmaOption.RECEIVE_BUFFER_SIZE), ByteBufAllocator.DEFAULT);
    }

    static RdmaServerTransport loopbackServer(RdmaEngine engine, RdmaTransportConfig config) {
        return new DefaultRdmaServerTransport(handler -> engine.bind(config, handler),
                config.option(RdmaOption.RECEIVE_BUFFER_SIZE), ByteBufAllocator.DEFAULT);
    }
}
