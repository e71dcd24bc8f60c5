package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * What every role's immutable configuration has: the host and port, the {@link RdmaOption options}, metrics
 * and the scheduler user callbacks run on. The roles add their own: {@link RdmaClientConfig} (observer,
 * connect private data), {@link RdmaServerConfig} (observer, acceptor), {@link RdmaDatagramConfig}. Every
 * {@code with*} method returns a copy of the same role, so a role's configuration keeps its role-specific
 * settings when a shared one changes.
 */
public abstract class RdmaTransportConfig {
    /** Default rdma_cm port of the framework's servers (rdma_cm ports are their own space, not TCP's). */
    public static final int DEFAULT_PORT = 7471;

    final TransportSettings settings;

    /** Package-private: the roles of this package are the only kinds of configuration. */
    RdmaTransportConfig(TransportSettings settings) {
        this.settings = settings;
    }

    /**
     * Only the shared settings, at their defaults (host unset, port {@value #DEFAULT_PORT}, every option at its
     * default, no metrics, poller-thread callbacks), for code that validates shared settings without a role.
     * To connect, bind or open an endpoint, start from {@link RdmaClientConfig#defaults()},
     * {@link RdmaServerConfig#defaults()} or {@link RdmaDatagramConfig#defaults()} (or the role's
     * {@code create()}).
     */
    public static RdmaTransportConfig defaults() {
        return SharedConfig.DEFAULT;
    }

    /** The host (name or IP literal) to connect to or listen on; null when unset. */
    @Nullable
    public final String host() {
        return settings.host;
    }

    /** The rdma_cm port; 0 on a server or datagram endpoint means "any free port". */
    public final int port() {
        return settings.port;
    }

    /** The value of {@code option}: the one set, else its default. */
    public final <T> T option(RdmaOption<T> option) {
        Objects.requireNonNull(option, "option");
        Object v = settings.options.get(option);
        return v != null ? option.type().cast(v) : option.defaultValue();
    }

    /** The options set explicitly (unmodifiable). */
    public final Map<RdmaOption<?>, Object> options() {
        return Collections.unmodifiableMap(settings.options);
    }

    /**
     * Whether meters are recorded: in {@link #metricsRecorder()}'s recorder when one is set, else in
     * Micrometer's global registry (as {@code metrics(true)} in Reactor Netty).
     */
    public final boolean metrics() {
        return settings.metrics;
    }

    /** Where meters go when {@link #metrics()} is on; null: Micrometer's global registry. */
    @Nullable
    public final Supplier<? extends RdmaMetricsRecorder> metricsRecorder() {
        return settings.metricsRecorder;
    }

    /** The scheduler user callbacks are moved to; null: they run on the engine's threads. */
    @Nullable
    public final Scheduler callbackScheduler() {
        return settings.callbackScheduler;
    }

    /**
     * The engine this configuration connects or binds through ({@code runOn(engine)}); null: the one found on the
     * class path, shared by the whole JVM.
     */
    @Nullable
    public final RdmaTransportProvider engine() {
        return settings.engine;
    }

    /**
     * A copy with {@code host}.
     *
     * @throws NullPointerException    when {@code host} is null
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ILLEGAL_ARGUMENT}) when it is blank
     */
    public abstract RdmaTransportConfig withHost(String host);

    /**
     * A copy with {@code port}.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ILLEGAL_ARGUMENT}) outside 0..65535
     */
    public abstract RdmaTransportConfig withPort(int port);

    /**
     * A copy with {@code option} set to {@code value}.
     *
     * @throws NullPointerException    when either is null
     * @throws InvalidRequestException when the option refuses the value (its message names the option)
     */
    public abstract <T> RdmaTransportConfig withOption(RdmaOption<T> option, T value);

    /** A copy with metrics on (in Micrometer's global registry) or off; either forgets a recorder set before. */
    public abstract RdmaTransportConfig withMetrics(boolean metrics);

    /**
     * A copy with metrics on, reported to the recorder {@code recorder} supplies (asked once per connection or
     * endpoint), or off ({@code enable} false; the recorder, which may then be null, is forgotten).
     *
     * @throws NullPointerException when {@code enable} is true and {@code recorder} is null
     */
    public abstract RdmaTransportConfig withMetrics(boolean enable,
            @Nullable Supplier<? extends RdmaMetricsRecorder> recorder);

    /** A copy whose user callbacks run on {@code scheduler}; null: on the engine's threads again. */
    public abstract RdmaTransportConfig withCallbackScheduler(@Nullable Scheduler scheduler);

    /** A copy that connects or binds through {@code engine}; null: through the class path's engine again. */
    public abstract RdmaTransportConfig withEngine(@Nullable RdmaTransportProvider engine);

    @Override
    public String toString() {
        return typeName() + "{" + settings + roleSettings() + "}";
    }

    /** The public type this configuration is, for {@link #toString()}. */
    String typeName() {
        return getClass().getSimpleName();
    }

    /** The role's own settings for {@link #toString()}, each preceded by ", "; empty when none is set. */
    String roleSettings() {
        return "";
    }
}
