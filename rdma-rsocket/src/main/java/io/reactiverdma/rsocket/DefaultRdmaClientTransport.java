package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaConnection;
import io.rsocket.DuplexConnection;
import reactor.core.publisher.Mono;

import java.util.Objects;
import java.util.function.Supplier;

/** The client transport: each connect opens one RDMA connection with {@code connector}. */

final class DefaultRdmaClientTransport extends RdmaClientTransport {
    private final Supplier<Mono<RdmaConnection>> connector;
    private final int maxFrameLength;
    private final ByteBufAllocator allocator;

    DefaultRdmaClientTransport(Supplier<Mono<RdmaConnection>> connector, int maxFrameLength,
            ByteBufAllocator allocator) {
        this.connector = connector;
        this.maxFrameLength = maxFrameLength;
        this.allocator = allocator;
    }

    @Override
    public RdmaClientTransport allocator(ByteBufAllocator allocator) {
        Objects.requireNonNull(allocator, "allocator");
        return new DefaultRdmaClientTransport(connector, maxFrameLength, allocator);
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    public Mono<DuplexConnection> connect() {
        return Mono.defer(connector).map(c -> new RdmaDuplexConnection(c, allocator));
    }
}
