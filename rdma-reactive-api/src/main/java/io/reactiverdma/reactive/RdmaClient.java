package io.reactiverdma.reactive;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Connects to an RDMA server (this framework's or any rdma_cm peer with a plain RC QP). Immutable: every
 * configuration method returns a new client.
 * <pre>{@code
 * RdmaConnection c = RdmaClient.create().host("10.0.0.1").port(7471).connectNow();
 * c.send(ByteBuffer.wrap("hello".getBytes())).block();
 * }</pre>
 */
public abstract class RdmaClient {
    RdmaClient() {
    }

    /** A client with {@link RdmaTransportConfig#defaults()}. */
    public static RdmaClient create() {
        return new DefaultRdmaClient(RdmaTransportConfig.defaults());
    }

    /** The configuration this client connects with. */
    public abstract RdmaTransportConfig configuration();

    /** The server's host name or IP address (an address on an RDMA device's netdev). */
    public abstract RdmaClient host(String host);

    /** The server's rdma_cm port (default {@value RdmaTransportConfig#DEFAULT_PORT}). */
    public abstract RdmaClient port(int port);

    /** Sets one option (validated now: an invalid value throws {@link InvalidRequestException}). */
    public abstract <T> RdmaClient option(RdmaOption<T> option, T value);

    /** Records meters under {@code rdma.} in Micrometer's global registry (or, false, records none). */
    public abstract RdmaClient metrics(boolean enable);

    /**
     * Reports what the engine measures to the recorder {@code recorder} supplies (asked once per connection),
     * or, {@code enable} false, records nothing. For meters in a registry of your choice:
     * {@code metrics(true, () -> MicrometerRdmaRecorder.of(registry))}.
     */
    public abstract RdmaClient metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder);

    /**
     * Tells {@code observer} about every {@link #connect()}: when it starts, and whether it is established,
     * fails or is cancelled ({@code MicrometerRdmaObserver.of(observationRegistry)} for Micrometer
     * Observation and so tracing). Null: no observer.
     */
    public abstract RdmaClient observer(RdmaConnectionObserver observer);

    /**
     * Sends {@code privateData} (copied; at most {@link RdmaTransportConfig#MAX_CONNECT_PRIVATE_DATA} bytes)
     * to the server's application with the connect request; the server's accept private data comes back in
     * {@link RdmaConnection#peerPrivateData()}.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) now,
     *                                 before anything is allocated, when it does not fit
     */
    public abstract RdmaClient privateData(byte[] privateData);

    /**
     * Connects from {@code host} (an address of an RDMA device's netdev): shorthand for
     * {@code option(RdmaOption.LOCAL_ADDRESS, host)}.
     */
    public final RdmaClient localAddress(String host) {
        Objects.requireNonNull(host, "host");
        return option(RdmaOption.LOCAL_ADDRESS, host);
    }

    /**
     * Runs user callbacks (operation signals, received messages, and {@link #connect()}'s result) on
     * {@code scheduler} instead of the engine's threads (the poller, the rdma_cm event thread).
     */
    public abstract RdmaClient callbackScheduler(Scheduler scheduler);

    /**
     * Resolves the address and route, creates the queue pair and connects. Emits the connection once it is
     * ESTABLISHED; fails with {@link RdmaConnectException} when resolution fails, the peer rejects (then a
     * {@link ConnectionRejectedException} saying why) or is
     * unreachable, or {@link RdmaOption#CONNECT_TIMEOUT} passes; fails with {@link RdmaException} when no
     * RDMA device is usable. Each subscription makes a new connection. Cancelling before it is established
     * abandons the attempt and releases what it created.
     */
    public abstract Mono<RdmaConnection> connect();

    /** {@link #connect()} and wait, at most the connect timeout plus 5 s. */
    public final RdmaConnection connectNow() {
        return connectNow(configuration().option(RdmaOption.CONNECT_TIMEOUT).plusSeconds(5));
    }

    /** {@link #connect()} and wait at most {@code timeout}. */
    public final RdmaConnection connectNow(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return connect().block(timeout);
    }
}

final class DefaultRdmaClient extends RdmaClient {
    private final RdmaTransportConfig config;

    DefaultRdmaClient(RdmaTransportConfig config) {
        this.config = config;
    }

    @Override
    public RdmaTransportConfig configuration() {
        return config;
    }

    @Override
    public RdmaClient host(String host) {
        return new DefaultRdmaClient(config.withHost(host));
    }

    @Override
    public RdmaClient port(int port) {
        return new DefaultRdmaClient(config.withPort(port));
    }

    @Override
    public <T> RdmaClient option(RdmaOption<T> option, T value) {
        return new DefaultRdmaClient(config.withOption(option, value));
    }

    @Override
    public RdmaClient metrics(boolean enable) {
        return new DefaultRdmaClient(config.withMetrics(enable));
    }

    @Override
    public RdmaClient metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder) {
        return new DefaultRdmaClient(config.withMetrics(enable, recorder));
    }

    @Override
    public RdmaClient observer(RdmaConnectionObserver observer) {
        return new DefaultRdmaClient(config.withObserver(observer));
    }

    @Override
    public RdmaClient privateData(byte[] privateData) {
        return new DefaultRdmaClient(config.withPrivateData(privateData));
    }

    @Override
    public RdmaClient callbackScheduler(Scheduler scheduler) {
        Objects.requireNonNull(scheduler, "scheduler");
        return new DefaultRdmaClient(config.withCallbackScheduler(scheduler));
    }

    @Override
    public Mono<RdmaConnection> connect() {
        return Mono.defer(() -> {
            if (config.host() == null) {
                return Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no host: call host(..) before connect()"));
            }
            return Providers.provider().connect(config);
        });
    }
}
