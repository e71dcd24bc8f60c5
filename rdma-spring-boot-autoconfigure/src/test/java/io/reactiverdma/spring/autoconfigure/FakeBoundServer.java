package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A bound server for lifecycle tests on the host: disposing it (as the engine does on device removal) ends it
 * at once (or when the test says so); a graceful dispose ends when the test completes {@link #drained} (or never, if it does not).
 */
final class FakeBoundServer implements DisposableRdmaServer {
    final Sinks.Empty<Void> drained = Sinks.empty();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private final int port;
    private final boolean closesAtOnce;
    private volatile boolean isDisposed;

    FakeBoundServer(int port) {
        this(port, true);
    }

    /** {@code closesAtOnce} false: after dispose() its connections stay closing until {@link #finishClosing()}. */
    FakeBoundServer(int port, boolean closesAtOnce) {
        this.port = port;
        this.closesAtOnce = closesAtOnce;
    }

    void finishClosing() {
        disposed.tryEmitEmpty();
    }

    @Override
    public InetSocketAddress address() {
        return new InetSocketAddress("10.77.0.1", port);
    }

    @Override
    public Flux<ConnectionEvent> connectionEvents() {
        return Flux.empty();
    }

    @Override
    public int connectionCount() {
        return 0;
    }

    @Override
    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    @Override
    public Mono<Void> disposeGracefully(Duration timeout) {
        return drained.asMono().doOnSuccess(v -> dispose());
    }

    @Override
    public void dispose() {
        isDisposed = true;
        if (closesAtOnce) {
            disposed.tryEmitEmpty();
        }
    }

    @Override
    public boolean isDisposed() {
        return isDisposed;
    }
}
