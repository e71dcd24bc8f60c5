package io.reactiverdma.reactive;

import reactor.core.scheduler.Scheduler;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The immutable configuration of an {@link RdmaClient} or {@link RdmaServer}: where to connect or listen,
 * the {@link RdmaOption options}, metrics, the connection observer and the scheduler user callbacks run on.
 * Every {@code with*} method returns a copy.
 */
public final class RdmaTransportConfig {
    /** Default rdma_cm port of the framework's servers (rdma_cm ports are their own space, not TCP's). */
    public static final int DEFAULT_PORT = 7471;
    /**
     * The most private data a client's application sends with its connect: the 56 bytes of an IB/RoCE CM
     * request (after rdma_cm's own header), less the engine's 24-byte negotiation.
     */
    public static final int MAX_CONNECT_PRIVATE_DATA = 32;
    private static final byte[] NO_DATA = new byte[0];

    private static final RdmaTransportConfig DEFAULT = new RdmaTransportConfig(null, DEFAULT_PORT, Map.of(), false,
            null, null, null, NO_DATA, null);

    private final String host;
    private final int port;
    private final Map<RdmaOption<?>, Object> options;
    private final boolean metrics;
    private final Supplier<? extends RdmaMetricsRecorder> metricsRecorder;
    private final RdmaConnectionObserver observer;
    private final Scheduler callbackScheduler;
    private final byte[] privateData;
    private final ConnectionAcceptor acceptor;

    private RdmaTransportConfig(String host, int port, Map<RdmaOption<?>, Object> options, boolean metrics,
            Supplier<? extends RdmaMetricsRecorder> metricsRecorder, RdmaConnectionObserver observer,
            Scheduler callbackScheduler, byte[] privateData, ConnectionAcceptor acceptor) {
        this.privateData = privateData;
        this.acceptor = acceptor;
        this.host = host;
        this.port = port;
        this.options = options;
        this.metrics = metrics;
        this.metricsRecorder = metricsRecorder;
        this.observer = observer;
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

    /**
     * Whether meters are recorded: in {@link #metricsRecorder()}'s recorder when one is set, else in
     * Micrometer's global registry (as {@code metrics(true)} in Reactor Netty).
     */
    public boolean metrics() {
        return metrics;
    }

    /** Where meters go when {@link #metrics()} is on; null: Micrometer's global registry. */
    public Supplier<? extends RdmaMetricsRecorder> metricsRecorder() {
        return metricsRecorder;
    }

    /** Told about every connect (client) or accept (server); null: none. */
    public RdmaConnectionObserver observer() {
        return observer;
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
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, callbackScheduler,
                privateData, acceptor);
    }

    public RdmaTransportConfig withPort(int port) {
        if (port < 0 || port > 65535) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "port must be 0..65535, got " + port);
        }
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, callbackScheduler,
                privateData, acceptor);
    }

    public <T> RdmaTransportConfig withOption(RdmaOption<T> option, T value) {
        Objects.requireNonNull(option, "option");
        T v = option.validate(value);
        Map<RdmaOption<?>, Object> copy = new IdentityHashMap<>(options);
        copy.put(option, v);
        return new RdmaTransportConfig(host, port, copy, metrics, metricsRecorder, observer, callbackScheduler,
                privateData, acceptor);
    }

    /** Metrics on (in Micrometer's global registry) or off; either forgets a recorder set before. */
    public RdmaTransportConfig withMetrics(boolean metrics) {
        return new RdmaTransportConfig(host, port, options, metrics, null, observer, callbackScheduler,
                privateData, acceptor);
    }

    /**
     * Metrics on, reported to the recorder {@code recorder} supplies (asked once per connection), or off
     * ({@code enable} false, the recorder forgotten).
     */
    public RdmaTransportConfig withMetrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder) {
        Objects.requireNonNull(recorder, "recorder");
        return new RdmaTransportConfig(host, port, options, enable, enable ? recorder : null, observer,
                callbackScheduler, privateData, acceptor);
    }

    /** {@code observer} null: no observer. */
    public RdmaTransportConfig withObserver(RdmaConnectionObserver observer) {
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, callbackScheduler,
                privateData, acceptor);
    }

    /** {@code scheduler} null: callbacks on the poller thread again. */
    public RdmaTransportConfig withCallbackScheduler(Scheduler scheduler) {
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, scheduler, privateData,
                acceptor);
    }

    /**
     * Client: {@code privateData} (copied) is sent to the server's application with the connect request
     * (its acceptor reads it in {@link ConnectRequest#privateData()}, its handler in
     * {@link RdmaConnection#peerPrivateData()}); empty: none.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) when it
     *                                 is longer than {@link #MAX_CONNECT_PRIVATE_DATA}
     */
    public RdmaTransportConfig withPrivateData(byte[] privateData) {
        Objects.requireNonNull(privateData, "privateData");
        if (privateData.length > MAX_CONNECT_PRIVATE_DATA) {
            throw new InvalidRequestException(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE,
                    "connect private data is " + privateData.length + " bytes; at most " + MAX_CONNECT_PRIVATE_DATA
                            + " fit (56 of the CM request less 24 of the engine's negotiation)");
        }
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, callbackScheduler,
                privateData.length == 0 ? NO_DATA : privateData.clone(), acceptor);
    }

    /** The private data a client sends with its connect (a copy; empty when none). */
    public byte[] privateData() {
        return privateData.clone();
    }

    /** Server: {@code acceptor} decides each connection request; null: every request is accepted. */
    public RdmaTransportConfig withAcceptor(ConnectionAcceptor acceptor) {
        return new RdmaTransportConfig(host, port, options, metrics, metricsRecorder, observer, callbackScheduler,
                privateData, acceptor);
    }

    /** The server's admission step; null when every request is accepted (up to {@link RdmaOption#MAX_CONNECTIONS}). */
    public ConnectionAcceptor acceptor() {
        return acceptor;
    }

    @Override
    public String toString() {
        return "RdmaTransportConfig{host=" + host + ", port=" + port + ", options=" + options + ", metrics="
                + metrics + (metricsRecorder != null ? " (recorder " + metricsRecorder + ")" : "")
                + (observer != null ? ", observer " + observer : "") + (callbackScheduler != null ? ", callbacks on " + callbackScheduler : "")
                + (privateData.length > 0 ? ", " + privateData.length + " bytes of private data" : "")
                + (acceptor != null ? ", acceptor " + acceptor : "") + "}";
    }
}
