package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What {@link RdmaClient}, {@link RdmaServer} and {@link RdmaDatagram} share: where to connect or bind, the
 * {@link RdmaOption options}, metrics and the scheduler user callbacks run on. Immutable: every method that
 * configures returns a new instance of the role ({@code T}) and leaves this one as it was. The roles add their
 * own configuration and their {@code connect()} / {@code bind()}.
 *
 * @param <T> the role (this type's subclass)
 * @param <C> the role's configuration
 */
public abstract class RdmaTransport<T extends RdmaTransport<T, C>, C extends RdmaTransportConfig> {
    private final C config;

    /** Package-private: the three roles of this package are the only transports. */
    RdmaTransport(C config) {
        this.config = config;
    }

    /** The configuration this instance connects or binds with. */
    public final C configuration() {
        return config;
    }

    /** A new instance of this role, with {@code config} and everything else of this one. */
    abstract T duplicate(C config);

    /**
     * The host: the server's address for a client; for a server or datagram endpoint, the local address to
     * listen on (an address of an RDMA device's netdev). Required before connecting or binding.
     *
     * @throws NullPointerException    when {@code host} is null
     * @throws InvalidRequestException when it is blank
     */
    public final T host(String host) {
        return with(configuration().withHost(host));
    }

    /**
     * The rdma_cm port (default {@value RdmaTransportConfig#DEFAULT_PORT}); a server or datagram endpoint takes
     * 0 as "any free port".
     *
     * @throws InvalidRequestException outside 0..65535
     */
    public final T port(int port) {
        return with(configuration().withPort(port));
    }

    /**
     * Sets one option, validated now.
     *
     * @throws NullPointerException    when {@code option} or {@code value} is null
     * @throws InvalidRequestException when the option refuses the value (the message names the option)
     */
    public final <O> T option(RdmaOption<O> option, O value) {
        return with(configuration().withOption(option, value));
    }

    /** Records meters under {@code rdma.} in Micrometer's global registry (or, false, records none). */
    public final T metrics(boolean enable) {
        return with(configuration().withMetrics(enable));
    }

    /**
     * Reports what the engine measures to the recorder {@code recorder} supplies (asked once per connection or
     * endpoint), or, {@code enable} false, records nothing (the recorder may then be null). For meters in a
     * registry of your choice: {@code metrics(true, () -> MicrometerRdmaRecorder.of(registry))}.
     *
     * @throws NullPointerException when {@code enable} is true and {@code recorder} is null
     */
    public final T metrics(boolean enable, @Nullable Supplier<? extends RdmaMetricsRecorder> recorder) {
        return with(configuration().withMetrics(enable, recorder));
    }

    /**
     * Runs user callbacks (operation signals, received messages, and a connect's result) on {@code scheduler}
     * instead of the engine's threads (the poller, the rdma_cm event thread). Null: back on the engine's threads.
     */
    public final T callbackScheduler(@Nullable Scheduler scheduler) {
        return with(configuration().withCallbackScheduler(scheduler));
    }

    /**
     * Connects or binds through {@code engine} instead of the engine found on the class path (which the whole
     * JVM shares, with {@link RdmaResources}): for tests that run an engine of their own (an in-JVM loopback
     * device, two engines side by side) and applications that keep engines apart. What this role connects or
     * binds lives in that engine and is released by its {@link RdmaTransportProvider#shutdown()}, not by
     * {@link RdmaResources#disposeLater()}. Null: the class path's engine again (the default).
     */
    public final T runOn(@Nullable RdmaTransportProvider engine) {
        return with(configuration().withEngine(engine));
    }

    /**
     * Every role's {@code with*} returns its own configuration type (see {@code RoleConfig}), so this cast
     * cannot fail; it is written once here instead of in every setter.
     */
    @SuppressWarnings("unchecked")
    private T with(RdmaTransportConfig config) {
        return duplicate((C) config);
    }

    /** The engine to connect or bind through: the one set with {@link #runOn}, else the class path's. */
    final RdmaTransportProvider engine() {
        RdmaTransportProvider engine = configuration().engine();
        return engine != null ? engine : Providers.provider();
    }

    /** {@code operation} subscribed and waited for, at most {@code timeout}: the roles' {@code *Now} methods. */
    static <R> R await(Mono<R> operation, Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return operation.block(timeout);
    }

    /**
     * {@code action} deferred per subscription, or an {@link InvalidRequestException} when no host is set: the
     * check every role's connect and bind start with.
     */
    final <R> Mono<R> requiringHost(String operation, String hint, Supplier<Mono<R>> action) {
        return Mono.defer(() -> configuration().host() == null
                ? Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no host: call host(..) before " + operation + hint))
                : action.get());
    }
}
