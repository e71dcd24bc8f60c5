package io.reactiverdma.reactive;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * Listens for rdma_cm connections and hands each one to a handler. Immutable: every configuration method
 * returns a new server. The shared settings (host, port, options, metrics, callback scheduler) are
 * {@link RdmaTransport}'s; the server adds its observer, admission ({@link #accept}, {@link #maxConnections},
 * {@link #acceptTimeout}), shared receive queue and handler.
 * <pre>{@code
 * DisposableRdmaServer server = RdmaServer.create().host("10.0.0.1").port(7471)
 *     .handle(conn -> conn.send(conn.receive(m -> ByteBuffer.wrap(m.toByteArray()))))   // an echo server
 *     .bindNow();
 * }</pre>
 * The handler is called on the rdma_cm event thread for each connection request, before the connection is
 * accepted, so receives it asks for are posted before the peer can send; operations it starts wait until
 * the connection is ESTABLISHED. When the {@code Publisher} it returns terminates, the connection is closed.
 */
public abstract class RdmaServer extends RdmaTransport<RdmaServer, RdmaServerConfig> {
    RdmaServer(RdmaServerConfig config) {
        super(config);
    }

    /** A server with {@link RdmaServerConfig#defaults()} and no handler yet. */
    public static RdmaServer create() {
        return new DefaultRdmaServer(RdmaServerConfig.defaults(), null);
    }

    /**
     * Tells {@code observer} about every connection request: when it arrives, and whether the connection is
     * established or fails. Null: no observer.
     */
    public final RdmaServer observer(@Nullable RdmaConnectionObserver observer) {
        return duplicate(configuration().withObserver(observer));
    }

    /**
     * Decides each connection request before anything is allocated for it: {@code acceptor} sees the peer's
     * address and private data and answers asynchronously with an {@link Admission} (accept, with private data
     * for the client, or reject with a reason the client reads in {@link ConnectionRejectedException}); it
     * must answer within {@link RdmaOption#ACCEPT_TIMEOUT}. Requests beyond {@link RdmaOption#MAX_CONNECTIONS}
     * are rejected before the acceptor sees them. Null: every request is accepted.
     */
    public final RdmaServer accept(@Nullable ConnectionAcceptor acceptor) {
        return duplicate(configuration().withAcceptor(acceptor));
    }

    /**
     * The most connections open or being admitted at once; a request beyond it is rejected: shorthand for
     * {@code option(RdmaOption.MAX_CONNECTIONS, max)}.
     *
     * @throws InvalidRequestException when {@code max} is below 1
     */
    public final RdmaServer maxConnections(int max) {
        return option(RdmaOption.MAX_CONNECTIONS, max);
    }

    /**
     * How long the {@linkplain #accept acceptor} may take to answer before the request is rejected: shorthand
     * for {@code option(RdmaOption.ACCEPT_TIMEOUT, timeout)}.
     *
     * @throws NullPointerException    when {@code timeout} is null
     * @throws InvalidRequestException when it is not positive
     */
    public final RdmaServer acceptTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return option(RdmaOption.ACCEPT_TIMEOUT, timeout);
    }

    /**
     * Every connection receives from one shared receive queue of {@code depth} buffers per RDMA device
     * (0: each connection its own): shorthand for {@code option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, depth)}.
     *
     * @throws InvalidRequestException when {@code depth} is out of the option's range
     */
    public final RdmaServer sharedReceiveQueue(int depth) {
        return option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, depth);
    }

    /**
     * As {@link #sharedReceiveQueue(int)}, the queue shared with the other servers of this engine that name
     * the same {@code group} (see {@link RdmaOption#SHARED_RECEIVE_QUEUE_GROUP}).
     *
     * @throws NullPointerException    when {@code group} is null
     * @throws InvalidRequestException when {@code depth} or {@code group} is refused by its option
     */
    public final RdmaServer sharedReceiveQueue(int depth, String group) {
        Objects.requireNonNull(group, "group");
        return sharedReceiveQueue(depth).option(RdmaOption.SHARED_RECEIVE_QUEUE_GROUP, group);
    }

    /**
     * What to do with each connection; the connection closes when the returned publisher terminates.
     *
     * @throws NullPointerException when {@code handler} is null
     */
    public abstract RdmaServer handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler);

    /**
     * Binds and listens. Emits the server once it listens; fails with {@link RdmaException} when the address
     * cannot be bound (no RDMA device there, port in use) and with {@link InvalidRequestException} when no
     * host or no handler was configured. Each subscription binds a new server.
     */
    public abstract Mono<DisposableRdmaServer> bind();

    /** {@link #bind()} and wait at most 30 s. */
    public final DisposableRdmaServer bindNow() {
        return bindNow(Duration.ofSeconds(30));
    }

    /** {@link #bind()} and wait at most {@code timeout}. */
    public final DisposableRdmaServer bindNow(Duration timeout) {
        return await(bind(), timeout);
    }
}

final class DefaultRdmaServer extends RdmaServer {
    @Nullable
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;

    DefaultRdmaServer(RdmaServerConfig config,
            @Nullable Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        super(config);
        this.handler = handler;
    }

    @Override
    RdmaServer duplicate(RdmaServerConfig config) {
        return new DefaultRdmaServer(config, handler);
    }

    @Override
    public RdmaServer handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        Objects.requireNonNull(handler, "handler");
        return new DefaultRdmaServer(configuration(), handler);
    }

    @Override
    public Mono<DisposableRdmaServer> bind() {
        return requiringHost("bind()", " (an address of an RDMA device's netdev)", () -> handler == null
                ? Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no handler: call handle(..) before bind()"))
                : engine().bind(configuration(), handler));
    }
}
