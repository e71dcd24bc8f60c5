package io.reactiverdma.reactive;

import reactor.core.scheduler.Scheduler;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The immutable configuration of an {@link RdmaClient} or {@link RdmaServer}: where to connect or listen,
 * the {@link RdmaOption options}, metrics and the scheduler user callbacks run on. Every {@code with*}
 * method returns a copy.
 */
public final class RdmaTransportConfig {
    /** Default rdma_cm port of the framework's servers (rdma_cm ports are their own space, not TCP's). */
    public static final int DEFAULT_PORT = 7471;

    private static final RdmaTransportConfig DEFAULT = new RdmaTransportConfig(null, DEFAULT_PORT, Map.of(), false, null);

    private final String host;
    private final int port;
    private final Map<RdmaOption<?>, Object> options;
    private final boolean metrics;
    private final Scheduler callbackScheduler;

    private RdmaTransportConfig(String host, int port, Map<RdmaOption<?>, Object> options, boolean metrics,
            Scheduler callbackScheduler) {
        this.host = host;
        this.port = port;
        this.options = options;
        this.metrics = metrics;
        this.callbackScheduler = callbackScheduler;
    }

    /** Host unset, port {@value #DEFAULT_PORT}, every option at its default, no metrics, poller-thread callbacks. */
    public static RdmaTransportConfig defaults() {
        return DEFAULT;
    }

    /** The host (name or IP literal) to connect to or listen on; null when unset. */
    public String host() {
        return host;
    }

    /** The rdma_cm port; 0 on a server means "any free port". */
    public int port() {
        return port;
    }

    /** The value of {@code option}: the one set, else its default. */
    public <T> T option(RdmaOption<T> option) {
        Objects.requireNonNull(option, "option");
        Object v = options.get(option);
        return v != null ? option.type().cast(v) : option.defaultValue();
    }

    /** The options set explicitly (unmodifiable). */
    public Map<RdmaOption<?>, Object> options() {
        return Collections.unmodifiableMap(options);
    }

    /** Whether meters are recorded (in Micrometer's global registry, as {@code metrics(true)} in Reactor Netty). */
    public boolean metrics() {
        return metrics;
    }

    /** The scheduler user callbacks are moved to; null: they run on the completion-poller thread. */
    public Scheduler callbackScheduler() {
        return callbackScheduler;
    }

    public RdmaTransportConfig withHost(String host) {
        Objects.requireNonNull(host, "host");
        if (host.isBlank()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, "host is blank");
        }
        return new RdmaTransportConfig(host, port, options, metrics, callbackScheduler);
    }

    public RdmaTransportConfig withPort(int port) {
        if (port < 0 || port > 65535) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "port must be 0..65535, got " + port);
        }
        return new RdmaTransportConfig(host, port, options, metrics, callbackScheduler);
    }

    public <T> RdmaTransportConfig withOption(RdmaOption<T> option, T value) {
        Objects.requireNonNull(option, "option");
        T v = option.validate(value);
        Map<RdmaOption<?>, Object> copy = new IdentityHashMap<>(options);
        copy.put(option, v);
        return new RdmaTransportConfig(host, port, copy, metrics, callbackScheduler);
    }

    public RdmaTransportConfig withMetrics(boolean metrics) {
        return new RdmaTransportConfig(host, port, options, metrics, callbackScheduler);
    }

    /** {@code scheduler} null: callbacks on the poller thread again. */
    public RdmaTransportConfig withCallbackScheduler(Scheduler scheduler) {
        return new RdmaTransportConfig(host, port, options, metrics, scheduler);
    }

    @Override
    public String toString() {
        return "RdmaTransportConfig{host=" + host + ", port=" + port + ", options=" + options + ", metrics="
                + metrics + (callbackScheduler != null ? ", callbacks on " + callbackScheduler : "") + "}";
    }
}
