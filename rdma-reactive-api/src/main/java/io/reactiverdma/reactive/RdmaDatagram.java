package io.reactiverdma.reactive;

import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * Opens unreliable-datagram (UD) endpoints: one UD queue pair on rdma_cm's UDP port space, bound to a local
 * address, that sends to and receives from any number of peers and multicast groups. Immutable: every
 * configuration method returns a new instance. The settings are {@link RdmaTransport}'s (host, port, options,
 * metrics, callback scheduler); a datagram endpoint has none of its own.
 * <pre>{@code
 * RdmaDatagramEndpoint e = RdmaDatagram.create().host("10.0.0.1").port(7174).bindNow();
 * e.send(ByteBuffer.wrap("tick".getBytes()), new InetSocketAddress("10.0.0.2", 7174)).block();
 * }</pre>
 * <p>Unreliable means what it says: see {@link RdmaDatagramEndpoint} for what can be lost or reordered.
 * Options used: {@link RdmaOption#SEND_QUEUE_DEPTH} (datagrams in flight), {@link RdmaOption#RECEIVE_QUEUE_DEPTH}
 * (receive buffers: datagrams that arrive while all of them are full or undelivered are dropped),
 * {@link RdmaOption#CONNECT_TIMEOUT} (resolving a peer), {@link RdmaOption#IDLE_STRATEGY},
 * {@link RdmaOption#POLL_BATCH_SIZE}, {@link RdmaOption#COMPLETION_QUEUE_MODE} and the {@code DATAGRAM_*}
 * options.
 */
public abstract class RdmaDatagram extends RdmaTransport<RdmaDatagram, RdmaDatagramConfig> {
    RdmaDatagram(RdmaDatagramConfig config) {
        super(config);
    }

    /** An unbound datagram configuration with {@link RdmaDatagramConfig#defaults()}. */
    public static RdmaDatagram create() {
        return new DefaultRdmaDatagram(RdmaDatagramConfig.defaults());
    }

    /**
     * Binds an rdma_cm id to the local address, creates the UD queue pair and its receive buffers, and
     * listens for peers that resolve it. Emits the endpoint once it can send and receive (its receive
     * buffers are posted: a datagram sent to it as soon as it is emitted finds one); fails with
     * {@link InvalidRequestException} when no host was given, {@link RdmaException} when the address is on
     * no RDMA device or the port is taken. Each subscription opens a new endpoint; cancelling before it is
     * emitted closes it.
     */
    public abstract Mono<RdmaDatagramEndpoint> bind();

    /** {@link #bind()} and wait at most 30 s. */
    public final RdmaDatagramEndpoint bindNow() {
        return bindNow(Duration.ofSeconds(30));
    }

    /** {@link #bind()} and wait at most {@code timeout}. */
    public final RdmaDatagramEndpoint bindNow(Duration timeout) {
        return await(bind(), timeout);
    }
}

final class DefaultRdmaDatagram extends RdmaDatagram {
    DefaultRdmaDatagram(RdmaDatagramConfig config) {
        super(config);
    }

    @Override
    RdmaDatagram duplicate(RdmaDatagramConfig config) {
        return new DefaultRdmaDatagram(config);
    }

    @Override
    public Mono<RdmaDatagramEndpoint> bind() {
        return requiringHost("bind()", "", () -> engine().bindDatagram(configuration()));
    }
}
