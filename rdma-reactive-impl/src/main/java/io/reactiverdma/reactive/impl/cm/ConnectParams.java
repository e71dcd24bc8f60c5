package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/** What a configuration asks of rdma_cm: the address to connect to or listen on, and the conn params. */
final class ConnectParams {
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
