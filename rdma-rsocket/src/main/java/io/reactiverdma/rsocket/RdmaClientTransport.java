package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.rsocket.DuplexConnection;
import io.rsocket.transport.ClientTransport;
import reactor.core.publisher.Mono;

import java.util.Objects;

/**
 * RSocket's client side over RDMA: each {@link #connect()} opens one RDMA connection with the given
 * {@link RdmaClient} and runs RSocket over it, one frame per RDMA message. Immutable: each setter returns a
 * copy.
 *
 * <pre>{@code
 * RdmaClientTransport transport = RdmaClientTransport.create(RdmaClient.create().host("10.0.0.1").port(7000));
 * RSocket rsocket = RSocketConnector.create().fragment(transport.maxFrameLength()).connect(transport).block();
 * }</pre>
 */
public abstract class RdmaClientTransport implements ClientTransport {
    RdmaClientTransport() {
    }

    /**
     * A transport that connects with {@code client}.
     *
     * @throws NullPointerException when {@code client} is null
     */
    public static RdmaClientTransport create(RdmaClient client) {
        Objects.requireNonNull(client, "client");
        return new DefaultRdmaClientTransport(client::connect,
                client.configuration().option(RdmaOption.RECEIVE_BUFFER_SIZE), ByteBufAllocator.DEFAULT);
    }

    /** The allocator RSocket builds outgoing frames with (default {@link ByteBufAllocator#DEFAULT}). */
    public abstract RdmaClientTransport allocator(ByteBufAllocator allocator);

    /**
     * The largest frame: the client's {@link RdmaOption#RECEIVE_BUFFER_SIZE}, which must be the server's too
     * (a frame above the peer's receive buffers ends the connection with a connection error). Give it to
     * {@code RSocketConnector.fragment(..)} so that larger payloads are fragmented.
     */
    @Override
    public abstract int maxFrameLength();

    /**
     * Opens an RDMA connection. Emits RSocket's connection once the RDMA connection is established; fails as
     * {@link RdmaClient#connect()} does. Cancelling before it emits cancels the connection attempt.
     */
    @Override
    public abstract Mono<DuplexConnection> connect();
}
