package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.DisposableRdmaServer;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;

/** The running server over a {@link DisposableRdmaServer}. */

final class DefaultRdmaServerChannel extends RdmaServerChannel {
    private final DisposableRdmaServer server;

    DefaultRdmaServerChannel(DisposableRdmaServer server) {
        this.server = server;
    }

    @Override
    public InetSocketAddress address() {
        return server.address();
    }

    @Override
    public int connectionCount() {
        return server.connectionCount();
    }

    @Override
    public void dispose() {
        server.dispose();
    }

    @Override
    public boolean isDisposed() {
        return server.isDisposed();
    }

    @Override
    public Mono<Void> onClose() {
        return server.onDispose();
    }
}
