package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.rsocket.transport.ServerTransport;
import reactor.core.publisher.Mono;

import java.util.Objects;

/**
 * RSocket's server side over RDMA: {@link #start} binds the given {@link RdmaServer} and runs RSocket over
 * each RDMA connection it accepts, one frame per RDMA message. Immutable: each setter returns a copy.
 *
 * <pre>{@code
 * RdmaServerTransport transport = RdmaServerTransport.create(RdmaServer.create().host("10.0.0.1").port(7000));
 * RdmaServerChannel server = RSocketServer.create(acceptor).fragment(transport.maxFrameLength())
 *         .bind(transport).block();
 * }</pre>
 */
public abstract class RdmaServerTransport implements ServerTransport<RdmaServerChannel> {
    RdmaServerTransport() {
    }

    /**
     * A transport that binds {@code server} (its handler, if it has one, is replaced by RSocket's).
     *
     * @throws NullPointerException when {@code server} is null
     */
    public static RdmaServerTransport create(RdmaServer server) {
        Objects.requireNonNull(server, "server");
        return new DefaultRdmaServerTransport(handler -> server.handle(handler).bind(),
                server.configuration().option(RdmaOption.RECEIVE_BUFFER_SIZE), ByteBufAllocator.DEFAULT);
    }

    /** The allocator RSocket builds outgoing frames with (default {@link ByteBufAllocator#DEFAULT}). */
    public abstract RdmaServerTransport allocator(ByteBufAllocator allocator);

    /**
     * The largest frame: the server's {@link RdmaOption#RECEIVE_BUFFER_SIZE}, which must be its clients' too.
     * Give it to {@code RSocketServer.fragment(..)} so that larger payloads are fragmented.
     */
    @Override
    public abstract int maxFrameLength();

    /**
     * Binds and listens. Emits the server once it listens; fails as {@link RdmaServer#bind()} does. Each
     * accepted RDMA connection is handed to {@code acceptor} and closed when RSocket closes it (or the peer
     * goes away).
     *
     * @throws NullPointerException when {@code acceptor} is null
     */
    @Override
    public abstract Mono<RdmaServerChannel> start(ConnectionAcceptor acceptor);
}
