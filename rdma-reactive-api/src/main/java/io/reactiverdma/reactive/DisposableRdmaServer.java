package io.reactiverdma.reactive;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.time.Duration;

/** A bound, listening server. Disposing stops listening and closes every connection it accepted. */
public interface DisposableRdmaServer extends Disposable {
    /** The address the server listens on (the port is the real one when 0 was configured). */
    InetSocketAddress address();

    default String host() {
        return address().getHostString();
    }

    default int port() {
        return address().getPort();
    }

    /**
     * Every connection event of the server's connections (CONNECT_REQUEST, ESTABLISHED, DISCONNECTED ...),
     * live: events before subscribing are not replayed. Completes when the server is disposed. Each subscriber
     * has its own buffer of 4096 events for when it requests less than arrives; one that falls further behind
     * gets an overflow error ({@code reactor.core.Exceptions.isOverflow}) rather than silently missing events.
     */
    Flux<ConnectionEvent> connectionEvents();

    /** The number of connections open now. */
    int connectionCount();

    /** Completes once the server stopped listening and every connection it accepted is closed. */
    Mono<Void> onDispose();

    /**
     * Shuts down gracefully: stops accepting at once (requests waiting for the acceptor are rejected with
     * {@link ConnectionRejectedException.Rejection#SHUTTING_DOWN}; new ones find nothing listening), lets each
     * open connection run until its handler's publisher terminates, for at most {@code timeout}, then disposes
     * what is left: those connections close as {@link #dispose()} closes them (their operations still
     * outstanding fail with {@link ConnectionClosedException}, their {@code receive()} completes). Completes
     * when the server and every connection are closed ({@link #onDispose()}); never errors. Lazy: nothing
     * happens until subscribed; subscribing again joins the shutdown under way. Cancelling does not stop it.
     */
    Mono<Void> disposeGracefully(Duration timeout);

    /** Disposes and waits at most 30 s for {@link #onDispose()}. */
    default void disposeNow() {
        disposeNow(Duration.ofSeconds(30));
    }

    /** Disposes and waits at most {@code timeout} for {@link #onDispose()} (IllegalStateException on timeout). */
    default void disposeNow(Duration timeout) {
        dispose();
        onDispose().block(timeout);
    }
}
