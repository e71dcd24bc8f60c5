package io.reactiverdma.reactive;

import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.Function;

/**
 * Listens for rdma_cm connections and hands each one to a handler. Immutable: every configuration method
 * returns a new server.
 * <pre>{@code
 * DisposableRdmaServer server = RdmaServer.create().host("10.0.0.1").port(7471)
 *     .handle(conn -> conn.send(conn.receive(m -> ByteBuffer.wrap(m.toByteArray()))))   // an echo server
 *     .bindNow();
 * }</pre>
 * The handler is called on the rdma_cm event thread for each connection request, before the connection is
 * accepted, so receives it asks for are posted before the peer can send; operations it starts wait until
 * the connection is ESTABLISHED. When the {@code Publisher} it returns terminates, the connection is closed.
 */
public abstract class RdmaServer {
    RdmaServer() {
    }

    public static RdmaServer create() {
        return new DefaultRdmaServer(RdmaTransportConfig.defaults(), null);
    }

    public abstract RdmaTransportConfig configuration();

    /** The local address to listen on: an address of an RDMA device's netdev. */
    public abstract RdmaServer host(String host);

    /** The rdma_cm port; 0 picks a free one (see {@link DisposableRdmaServer#port()}). */
    public abstract RdmaServer port(int port);

    public abstract <T> RdmaServer option(RdmaOption<T> option, T value);

    /** Records meters under {@code rdma.} in Micrometer's global registry (or, false, records none). */
    public abstract RdmaServer metrics(boolean enable);

    /** As {@link RdmaClient#metrics(boolean, Supplier)}: what the engine measures, to {@code recorder}'s recorder. */
    public abstract RdmaServer metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder);

    /**
     * Tells {@code observer} about every connection request: when it arrives, and whether the connection is
     * established or fails. Null: no observer.
     */
    public abstract RdmaServer observer(RdmaConnectionObserver observer);

    public abstract RdmaServer callbackScheduler(Scheduler scheduler);

    /**
     * Decides each connection request before anything is allocated for it: {@code acceptor} sees the peer's
     * address and private data and answers asynchronously with an {@link Admission} (accept, with private data
     * for the client, or reject with a reason the client reads in {@link ConnectionRejectedException}); it
     * must answer within {@link RdmaOption#ACCEPT_TIMEOUT}. Requests beyond {@link RdmaOption#MAX_CONNECTIONS}
     * are rejected before the acceptor sees them. Null: every request is accepted.
     */
    public abstract RdmaServer accept(ConnectionAcceptor acceptor);

    /** What to do with each connection; the connection closes when the returned publisher terminates. */
    public abstract RdmaServer handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler);

    /**
     * Binds and listens. Emits the server once it listens; fails with {@link RdmaException} when the address
     * cannot be bound (no RDMA device there, port in use) and with {@link InvalidRequestException} when no
     * host or no handler was configured.
     */
    public abstract Mono<DisposableRdmaServer> bind();

    /** {@link #bind()} and wait at most 30 s. */
    public final DisposableRdmaServer bindNow() {
        return bindNow(Duration.ofSeconds(30));
    }

    public final DisposableRdmaServer bindNow(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return bind().block(timeout);
    }
}

final class DefaultRdmaServer extends RdmaServer {
    private final RdmaTransportConfig config;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;

    DefaultRdmaServer(RdmaTransportConfig config, Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        this.config = config;
        this.handler = handler;
    }

    @Override
    public RdmaTransportConfig configuration() {
        return config;
    }

    @Override
    public RdmaServer host(String host) {
        return new DefaultRdmaServer(config.withHost(host), handler);
    }

    @Override
    public RdmaServer port(int port) {
        return new DefaultRdmaServer(config.withPort(port), handler);
    }

    @Override
    public <T> RdmaServer option(RdmaOption<T> option, T value) {
        return new DefaultRdmaServer(config.withOption(option, value), handler);
    }

    @Override
    public RdmaServer metrics(boolean enable) {
        return new DefaultRdmaServer(config.withMetrics(enable), handler);
    }

    @Override
    public RdmaServer metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder) {
        return new DefaultRdmaServer(config.withMetrics(enable, recorder), handler);
    }

    @Override
    public RdmaServer observer(RdmaConnectionObserver observer) {
        return new DefaultRdmaServer(config.withObserver(observer), handler);
    }

    @Override
    public RdmaServer callbackScheduler(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return new DefaultRdmaServer(config.withCallbackScheduler(scheduler), handler);
    }

    @Override
    public RdmaServer accept(ConnectionAcceptor acceptor) {
        return new DefaultRdmaServer(config.withAcceptor(acceptor), handler);
    }

    @Override
    public RdmaServer handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        Objects.requireNonNull(handler, "handler");
        return new DefaultRdmaServer(config, handler);
    }

    @Override
    public Mono<DisposableRdmaServer> bind() {
        return Mono.defer(() -> {
            if (config.host() == null) {
                return Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no host: call host(..) before bind() (an address of an RDMA device's netdev)"));
            }
            if (handler == null) {
                return Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no handler: call handle(..) before bind()"));
            }
            return Providers.provider().bind(config, handler);
        });
    }
}
