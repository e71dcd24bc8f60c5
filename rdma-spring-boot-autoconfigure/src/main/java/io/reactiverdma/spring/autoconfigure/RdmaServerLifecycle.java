package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaServer;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The auto-configured RDMA server, bound in a {@link SmartLifecycle} phase: when the context starts, after the
 * web server started (so no RDMA connection reaches the handler while the application cannot yet serve HTTP),
 * also with lazy initialisation; when it stops, in the web server's graceful-shutdown phase (RDMA connections
 * drain while HTTP requests drain) and before the web server stops. Stopping disposes the server (no new connections, every connection
 * closed, after the drain timeout when one is set) without blocking the context's shutdown thread: the context
 * waits for it at most its {@code spring.lifecycle.timeout-per-shutdown-phase}. Not pauseable, as the web
 * server.
 */
public class RdmaServerLifecycle implements SmartLifecycle {
    /**
     * Spring Boot's web server graceful-shutdown phase ({@code WebServerGracefulShutdownLifecycle
     * .SMART_LIFECYCLE_PHASE}, {@code Integer.MAX_VALUE - 1024}), above its start/stop phase
     * ({@code Integer.MAX_VALUE - 2048}): starts after the web server started; on shutdown drains while HTTP
     * drains (both under the one per-phase timeout, not one after the other), before the web server stops.
     */
    public static final int PHASE = Integer.MAX_VALUE - 1024;

    private static final Log LOG = LogFactory.getLog(RdmaServerLifecycle.class);

    private final RdmaServer server;
    private final Function<Duration, DisposableRdmaServer> binder;
    private final Duration bindTimeout;
    private final Duration drainTimeout;
    private final Duration shutdownTimeout;
    private volatile DisposableRdmaServer bound;

    /** {@code server} is bound with {@code bindTimeout} on start and disposed with {@code shutdownTimeout} on stop. */
    public RdmaServerLifecycle(RdmaServer server, Duration bindTimeout, Duration shutdownTimeout) {
        this(server, bindTimeout, Duration.ZERO, shutdownTimeout);
    }

    /**
     * As {@link #RdmaServerLifecycle(RdmaServer, Duration, Duration)}, but stopping gracefully: open connections
     * may go on working for {@code drainTimeout} after the server stopped accepting
     * ({@link DisposableRdmaServer#disposeGracefully(Duration)}); zero closes them at once.
     */
    public RdmaServerLifecycle(RdmaServer server, Duration bindTimeout, Duration drainTimeout, Duration shutdownTimeout) {
        this(server, server::bindNow, bindTimeout, drainTimeout, shutdownTimeout);
    }

    /** With {@code binder} in place of {@link RdmaServer#bindNow(Duration)}: tests bind a server of their own. */
    RdmaServerLifecycle(RdmaServer server, Function<Duration, DisposableRdmaServer> binder, Duration bindTimeout,
            Duration drainTimeout, Duration shutdownTimeout) {
        this.server = Objects.requireNonNull(server, "server");
        this.binder = Objects.requireNonNull(binder, "binder");
        this.bindTimeout = Objects.requireNonNull(bindTimeout, "bindTimeout");
        this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    /** The configured server (properties, handler, customizers applied), bound or not. */
    public RdmaServer configuration() {
        return server;
    }

    /** The bound server while running, else null. */
    public DisposableRdmaServer server() {
        return bound;
    }

    /**
     * Binds and waits at most the bind timeout. A failure ({@code RdmaException} "cannot listen on ...", Reactor's
     * {@code IllegalStateException} on timeout) fails the context start. A server that disposed itself (its
     * device was removed) is bound anew.
     */
    @Override
    public synchronized void start() {
        if (!isRunning()) {
            bound = binder.apply(bindTimeout);
        }
    }

    /**
     * As {@link #stop(Runnable)}, waiting for it: at most the drain timeout plus the shutdown timeout.
     */
    @Override
    public void stop() {
        CountDownLatch stopped = new CountDownLatch(1);
        stop(stopped::countDown);
        try {
            stopped.await(drainTimeout.plus(shutdownTimeout).plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops accepting, lets open connections work for at most the drain timeout (none when zero), then closes
     * them, and calls {@code callback} once they are closed or the shutdown timeout passed (a close that did not
     * finish is logged). Returns at once, so that the context's {@code spring.lifecycle
     * .timeout-per-shutdown-phase} bounds how long the context waits.
     */
    @Override
    public void stop(Runnable callback) {
        DisposableRdmaServer s;
        synchronized (this) {
            s = bound;
            bound = null;
        }
        if (s == null) {
            callback.run();
            return;
        }
        Mono<Void> closed;
        Duration limit;
        if (drainTimeout.isZero()) {
            s.dispose();
            closed = s.onDispose();
            limit = shutdownTimeout;
        } else {
            // disposeGracefully disposes after the drain timeout itself; the timeout here bounds a close that hangs.
            closed = s.disposeGracefully(drainTimeout).onErrorResume(e -> Mono.empty());
            limit = drainTimeout.plus(shutdownTimeout);
        }
        closed.timeout(limit, Mono.defer(() -> {
                    s.dispose();
                    LOG.warn("the RDMA server on " + s.host() + ":" + s.port() + " had connections still "
                            + "closing after " + limit + " (its drain and shutdown timeouts): stopped waiting");
                    return Mono.empty();
                }))
                .doFinally(signal -> callback.run())
                .subscribe(v -> { }, e -> { });
    }

    /** True while bound and not disposed (the engine disposes a server whose device was removed). */
    @Override
    public boolean isRunning() {
        DisposableRdmaServer s = bound;
        return s != null && !s.isDisposed();
    }

    /**
     * False, as Spring Boot's web server: pausing a context (Spring Test's context cache does) would close every
     * RDMA connection, and restarting would bind again, on another port when the port is 0.
     */
    @Override
    public boolean isPauseable() {
        return false;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
