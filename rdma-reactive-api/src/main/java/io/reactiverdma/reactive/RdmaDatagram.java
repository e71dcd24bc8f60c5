package io.reactiverdma.reactive;

import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Opens unreliable-datagram (UD) endpoints: one UD queue pair on rdma_cm's UDP port space, bound to a local
 * address, that sends to and receives from any number of peers and multicast groups. Immutable: every
 * configuration method returns a new instance.
 * <pre>{@code
 * RdmaDatagramEndpoint e = RdmaDatagram.create().host("10.0.0.1").port(7174).bindNow();
 * e.send(ByteBuffer.wrap("tick".getBytes()), new InetSocketAddress("10.0.0.2", 7174)).block();
 * }</pre>
 * <p>Unreliable means what it says: see {@link RdmaDatagramEndpoint} for what can be lost or reordered.
 * Options used: {@link RdmaOption#SEND_QUEUE_DEPTH} (datagrams in flight), {@link RdmaOption#RECEIVE_QUEUE_DEPTH}
 * (receive buffers: datagrams that arrive while all of them are full or undelivered are dropped),
 * {@link RdmaOption#CONNECT_TIMEOUT} (resolving a peer), {@link RdmaOption#IDLE_STRATEGY},
 * {@link RdmaOption#POLL_BATCH_SIZE} and {@link RdmaOption#COMPLETION_QUEUE_MODE}.
 */
public abstract class RdmaDatagram {
    RdmaDatagram() {
    }

    /** An unbound datagram configuration with {@link RdmaTransportConfig#defaults()}. */
    public static RdmaDatagram create() {
        return new DefaultRdmaDatagram(RdmaTransportConfig.defaults());
    }

    /** The configuration endpoints are opened with. */
    public abstract RdmaTransportConfig configuration();

    /** The local address to bind to: an address on an RDMA device's netdev (required). */
    public abstract RdmaDatagram host(String host);

    /** The local rdma_cm UDP port (0: any free one; peers resolve this endpoint through it). */
    public abstract RdmaDatagram port(int port);

    /** Sets one option (validated now: an invalid value throws {@link InvalidRequestException}). */
    public abstract <T> RdmaDatagram option(RdmaOption<T> option, T value);

    /** Records datagram meters under {@code rdma.} in Micrometer's global registry (or, false, none). */
    public abstract RdmaDatagram metrics(boolean enable);

    /** Reports datagram counts to the recorder {@code recorder} supplies (asked once per endpoint). */
    public abstract RdmaDatagram metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder);

    /**
     * Binds an rdma_cm id to the local address, creates the UD queue pair and its receive buffers, and
     * listens for peers that resolve it. Emits the endpoint once it can send and receive; fails with
     * {@link InvalidRequestException} when no host was given, {@link RdmaException} when the address is on
     * no RDMA device or the port is taken. Each subscription opens a new endpoint.
     */
    public abstract Mono<RdmaDatagramEndpoint> bind();

    /** {@link #bind()} and wait at most 30 s. */
    public final RdmaDatagramEndpoint bindNow() {
        return bindNow(Duration.ofSeconds(30));
    }

    /** {@link #bind()} and wait at most {@code timeout}. */
    public final RdmaDatagramEndpoint bindNow(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return bind().block(timeout);
    }
}

final class DefaultRdmaDatagram extends RdmaDatagram {
    private final RdmaTransportConfig config;

    DefaultRdmaDatagram(RdmaTransportConfig config) {
        this.config = config;
    }

    @Override
    public RdmaTransportConfig configuration() {
        return config;
    }

    @Override
    public RdmaDatagram host(String host) {
        return new DefaultRdmaDatagram(config.withHost(host));
    }

    @Override
    public RdmaDatagram port(int port) {
        return new DefaultRdmaDatagram(config.withPort(port));
    }

    @Override
    public <T> RdmaDatagram option(RdmaOption<T> option, T value) {
        return new DefaultRdmaDatagram(config.withOption(option, value));
    }

    @Override
    public RdmaDatagram metrics(boolean enable) {
        return new DefaultRdmaDatagram(config.withMetrics(enable));
    }

    @Override
    public RdmaDatagram metrics(boolean enable, Supplier<? extends RdmaMetricsRecorder> recorder) {
        return new DefaultRdmaDatagram(config.withMetrics(enable, recorder));
    }

    @Override
    public Mono<RdmaDatagramEndpoint> bind() {
        return Mono.defer(() -> {
            if (config.host() == null) {
                return Mono.error(new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "no host: call host(..) before bind()"));
            }
            return Providers.provider().bindDatagram(config);
        });
    }
}
