package io.reactiverdma.reactive;

import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * Connects to an RDMA server (this framework's or any rdma_cm peer with a plain RC QP). Immutable: every
 * configuration method returns a new client. The shared settings (host, port, options, metrics, callback
 * scheduler) are {@link RdmaTransport}'s; the client adds its observer, private data, local address and connect
 * timeout.
 * <pre>{@code
 * RdmaConnection c = RdmaClient.create().host("10.0.0.1").port(7471).connectNow();
 * c.send(ByteBuffer.wrap("hello".getBytes())).block();
 * }</pre>
 */
public abstract class RdmaClient extends RdmaTransport<RdmaClient, RdmaClientConfig> {
    RdmaClient(RdmaClientConfig config) {
        super(config);
    }

    /** A client with {@link RdmaClientConfig#defaults()}. */
    public static RdmaClient create() {
        return new DefaultRdmaClient(RdmaClientConfig.defaults());
    }

    /**
     * Tells {@code observer} about every {@link #connect()}: when it starts, and whether it is established,
     * fails or is cancelled ({@code MicrometerRdmaObserver.of(observationRegistry)} for Micrometer
     * Observation and so tracing). Null: no observer.
     */
    public final RdmaClient observer(@Nullable RdmaConnectionObserver observer) {
        return duplicate(configuration().withObserver(observer));
    }

    /**
     * Sends {@code privateData} (copied; at most {@link RdmaClientConfig#MAX_CONNECT_PRIVATE_DATA} bytes)
     * to the server's application with the connect request; the server's accept private data comes back in
     * {@link RdmaConnection#peerPrivateData()}.
     *
     * @throws NullPointerException    when {@code privateData} is null
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) now,
     *                                 before anything is allocated, when it does not fit
     */
    public final RdmaClient privateData(byte[] privateData) {
        return duplicate(configuration().withPrivateData(privateData));
    }

    /**
     * Connects from {@code host} (an address of an RDMA device's netdev): shorthand for
     * {@code option(RdmaOption.LOCAL_ADDRESS, host)}.
     */
    public final RdmaClient localAddress(String host) {
        Objects.requireNonNull(host, "host");
        return option(RdmaOption.LOCAL_ADDRESS, host);
    }

    /**
     * How long resolving and connecting may take before {@link #connect()} fails: shorthand for
     * {@code option(RdmaOption.CONNECT_TIMEOUT, timeout)}.
     *
     * @throws NullPointerException    when {@code timeout} is null
     * @throws InvalidRequestException when it is not positive
     */
    public final RdmaClient connectTimeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return option(RdmaOption.CONNECT_TIMEOUT, timeout);
    }

    /**
     * Resolves the address and route, creates the queue pair and connects. Emits the connection once it is
     * ESTABLISHED; fails with {@link RdmaConnectException} when resolution fails, the peer rejects (then a
     * {@link ConnectionRejectedException} saying why) or is
     * unreachable, or {@link RdmaOption#CONNECT_TIMEOUT} passes; fails with {@link RdmaException} when no
     * RDMA device is usable, and with {@link InvalidRequestException} when no host was configured. Each
     * subscription makes a new connection. Cancelling before it is established abandons the attempt and
     * releases what it created.
     */
    public abstract Mono<RdmaConnection> connect();

    /** {@link #connect()} and wait, at most the connect timeout plus 5 s. */
    public final RdmaConnection connectNow() {
        return connectNow(configuration().option(RdmaOption.CONNECT_TIMEOUT).plusSeconds(5));
    }

    /** {@link #connect()} and wait at most {@code timeout}. */
    public final RdmaConnection connectNow(Duration timeout) {
        return await(connect(), timeout);
    }
}

final class DefaultRdmaClient extends RdmaClient {
    DefaultRdmaClient(RdmaClientConfig config) {
        super(config);
    }

    @Override
    RdmaClient duplicate(RdmaClientConfig config) {
        return new DefaultRdmaClient(config);
    }

    @Override
    public Mono<RdmaConnection> connect() {
        return requiringHost("connect()", "", () -> engine().connect(configuration()));
    }
}
