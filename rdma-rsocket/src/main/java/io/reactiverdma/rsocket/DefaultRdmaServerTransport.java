package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import java.util.Objects;
import java.util.function.Function;

/** The server transport: {@code binder} binds an RDMA server with the handler it is given. */

final class DefaultRdmaServerTransport extends RdmaServerTransport {
    private final Function<Function<? super RdmaConnection, ? extends Publisher<Void>>,
            Mono<DisposableRdmaServer>> binder;
    private final int maxFrameLength;
    private final ByteBufAllocator allocator;

    DefaultRdmaServerTransport(
            Function<Function<? super RdmaConnection, ? extends Publisher<Void>>, Mono<DisposableRdmaServer>> binder,
            int maxFrameLength, ByteBufAllocator allocator) {
        this.binder = binder;
        this.maxFrameLength = maxFrameLength;
        this.allocator = allocator;
    }

    @Override
    public RdmaServerTransport allocator(ByteBufAllocator allocator) {
        Objects.requireNonNull(allocator, "allocator");
        return new DefaultRdmaServerTransport(binder, maxFrameLength, allocator);
    }

    @Override
    public int maxFrameLength() {
        return maxFrameLength;
    }

    @Override
    public Mono<RdmaServerChannel> start(ConnectionAcceptor acceptor) {
        Objects.requireNonNull(acceptor, "acceptor");
        return Mono.defer(() -> binder.apply(rdma -> {
            RdmaDuplexConnection connection = new RdmaDuplexConnection(rdma, allocator);
            // A refused or failed setup has already been answered with an ERROR frame and the connection
            // closed by RSocket: the handler then only waits for the close, so the engine does not report
            // RSocket's own setup errors as a failed handler.
            return acceptor.apply(connection).onErrorResume(e -> Mono.empty()).then(connection.onClose());
        })).map(DefaultRdmaServerChannel::new);
    }
}
