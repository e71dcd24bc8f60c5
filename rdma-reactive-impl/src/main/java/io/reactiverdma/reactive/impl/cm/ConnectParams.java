package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * What a configuration asks of rdma_cm: the address to connect to or listen on (a server's, a datagram
 * endpoint's), and the conn params. Host names are resolved before the work reaches the rdma_cm thread, on Reactor's bounded-elastic threads: that
 * one thread serves every client and server of the engine, and a slow lookup there would stall them all.
 */
public final class ConnectParams {
    private static final Pattern IPV4_LITERAL = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    /** Where a client connects to, and from (null: routing picks). */
    public record ClientAddresses(InetSocketAddress destination, @Nullable InetSocketAddress source) {
    }

    private ConnectParams() {
    }

    static ConnectSpec connParam(RdmaTransportConfig config, DeviceResources device, byte[] privateData) {
        int depth = Math.min(config.option(RdmaOption.READ_ATOMIC_DEPTH), Math.max(1, device.context().maxQpRdAtom()));
        return new ConnectSpec(depth, depth, config.option(RdmaOption.RETRY_COUNT),
                config.option(RdmaOption.RNR_RETRY_COUNT), privateData);
    }

    /** {@link RdmaOption#ACK_TIMEOUT} on {@code id} when one is set (before connect or accept). */
    static void applyAckTimeout(RdmaTransportConfig config, CmId id) {
        int t = config.option(RdmaOption.ACK_TIMEOUT);
        if (t > 0) {
            id.setAckTimeout(t);
        }
    }

    /** The address a client connects from ({@link RdmaOption#LOCAL_ADDRESS}), or null when unset. */
    static InetSocketAddress localAddress(RdmaTransportConfig config) {
        String host = config.option(RdmaOption.LOCAL_ADDRESS);
        return host.isEmpty() ? null : resolve(host, 0);
    }

    static InetSocketAddress address(RdmaTransportConfig config) {
        return resolve(config.host(), config.port());
    }

    /**
     * The client's destination and {@link RdmaOption#LOCAL_ADDRESS}, resolved off the rdma_cm thread; fails
     * with {@link RdmaConnectException} ({@code ADDRESS_ERROR}) when either does not resolve.
     */
    public static Mono<ClientAddresses> clientAddresses(RdmaTransportConfig config) {
        String local = config.option(RdmaOption.LOCAL_ADDRESS);
        return offTheCmThread(literal(config.host()) && (local.isEmpty() || literal(local)),
                () -> new ClientAddresses(address(config), localAddress(config)));
    }

    /** The address a server listens on, resolved off the rdma_cm thread (see {@link #clientAddresses}). */
    public static Mono<InetSocketAddress> listenAddress(RdmaTransportConfig config) {
        return offTheCmThread(literal(config.host()), () -> address(config));
    }

    /** An IP literal resolves without a lookup, so at once; a name on a thread that may block. */
    static <T> Mono<T> offTheCmThread(boolean literal, java.util.concurrent.Callable<T> resolve) {
        Mono<T> resolved = Mono.fromCallable(resolve);
        return literal ? resolved : resolved.subscribeOn(Schedulers.boundedElastic());
    }

    static boolean literal(String host) {
        return host.indexOf(':') >= 0 || IPV4_LITERAL.matcher(host).matches();
    }

    private static InetSocketAddress resolve(String host, int port) {
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            RdmaConnectException typed = new RdmaConnectException("cannot resolve host " + host + ": "
                    + e.getMessage(), ConnectionEvent.Type.ADDRESS_ERROR, 0, null);
            typed.initCause(e);
            throw typed;
        }
    }
}
