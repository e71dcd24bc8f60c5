package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The settings every role shares (where, the options, metrics, the callback scheduler), validated once
 * here so that {@link RdmaTransportConfig} and its role configurations only carry them. Immutable.
 */
final class TransportSettings {
    static final TransportSettings DEFAULT = new TransportSettings(null, RdmaTransportConfig.DEFAULT_PORT, Map.of(),
            false, null, null, null);

    @Nullable
    final String host;
    final int port;
    /** Never modified after construction: every change copies it. */
    final Map<RdmaOption<?>, Object> options;
    final boolean metrics;
    @Nullable
    final Supplier<? extends RdmaMetricsRecorder> metricsRecorder;
    @Nullable
    final Scheduler callbackScheduler;
    /** The engine to connect or bind through; null: the one the class path provides. */
    @Nullable
    final RdmaTransportProvider engine;

    private TransportSettings(@Nullable String host, int port, Map<RdmaOption<?>, Object> options, boolean metrics,
            @Nullable Supplier<? extends RdmaMetricsRecorder> metricsRecorder, @Nullable Scheduler callbackScheduler,
            @Nullable RdmaTransportProvider engine) {
        this.host = host;
        this.port = port;
        this.options = options;
        this.metrics = metrics;
        this.metricsRecorder = metricsRecorder;
        this.callbackScheduler = callbackScheduler;
        this.engine = engine;
    }

    TransportSettings withHost(String host) {
        Objects.requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, "host is blank");
        }
        return new TransportSettings(host, port, options, metrics, metricsRecorder, callbackScheduler, engine);
    }

    TransportSettings withPort(int port) {
        if (port < 0 || port > 65535) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "port must be 0..65535, got " + port);
        }
        return new TransportSettings(host, port, options, metrics, metricsRecorder, callbackScheduler, engine);
    }

    <T> TransportSettings withOption(RdmaOption<T> option, T value) {
        Objects.requireNonNull(option, "option");
        T v = option.validate(value);
        Map<RdmaOption<?>, Object> copy = new IdentityHashMap<>(options);
        copy.put(option, v);
        return new TransportSettings(host, port, copy, metrics, metricsRecorder, callbackScheduler, engine);
    }

    /** These settings with only the options {@code role} uses. */
    TransportSettings withOptionsOf(RdmaOption.Role role) {
        Map<RdmaOption<?>, Object> kept = new IdentityHashMap<>(options);
        kept.keySet().removeIf(o -> !o.appliesTo(role));
        return kept.size() == options.size() ? this
                : new TransportSettings(host, port, kept, metrics, metricsRecorder, callbackScheduler, engine);
    }

    TransportSettings withMetrics(boolean enable, @Nullable Supplier<? extends RdmaMetricsRecorder> recorder) {
        if (enable && recorder == null) {
            // metrics(true) is the way to the global registry; a null supplier here is a caller's mistake.
            throw new NullPointerException("recorder");
        }
        return new TransportSettings(host, port, options, enable, enable ? recorder : null, callbackScheduler, engine);
    }

    TransportSettings withGlobalMetrics(boolean enable) {
        return new TransportSettings(host, port, options, enable, null, callbackScheduler, engine);
    }

    TransportSettings withCallbackScheduler(@Nullable Scheduler scheduler) {
        return new TransportSettings(host, port, options, metrics, metricsRecorder, scheduler, engine);
    }

    TransportSettings withEngine(@Nullable RdmaTransportProvider engine) {
        return new TransportSettings(host, port, options, metrics, metricsRecorder, callbackScheduler, engine);
    }

    @Override
    public String toString() {
        return "host=" + host + ", port=" + port + ", options=" + options + ", metrics=" + metrics
                + (metricsRecorder != null ? " (recorder " + metricsRecorder + ")" : "")
                + (callbackScheduler != null ? ", callbacks on " + callbackScheduler : "")
                + (engine != null ? ", on " + engine : "");
    }
}
