package io.reactiverdma.rsocket;

import io.rsocket.Closeable;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;

/** A running RSocket server over RDMA, as {@link RdmaServerTransport#start} emits it. */
public abstract class RdmaServerChannel implements Closeable {
    RdmaServerChannel() {
    }

    /** The address it listens on (with the bound port when port 0 was asked for). */
    public abstract InetSocketAddress address();

    /** The RDMA connections open now. */
    public abstract int connectionCount();

    /** Stops listening and closes every connection (asynchronously: see {@link #onClose()}). Idempotent. */
    @Override
    public abstract void dispose();

    /** Completes (never errors) once the listener and every connection are closed and released. */
    @Override
    public abstract Mono<Void> onClose();
}
