package io.reactiverdma.spring.autoconfigure;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * What the auto-configured servers over RDMA share as {@link SmartLifecycle} beans (the RDMA server and the
 * RSocket server over RDMA), so a fix to one reaches both: bound in the web server's graceful-shutdown phase
 * ({@link RdmaServerLifecycle#PHASE}); bound again on start when the server disposed itself; stopped without
 * blocking the context's shutdown thread, bounded by the drain and shutdown timeouts; not pauseable.
 *
 * @param <S> the running server
 */
abstract class BoundServerLifecycle<S> implements SmartLifecycle {
    private static final Log LOG = LogFactory.getLog(BoundServerLifecycle.class);

    private final Duration bindTimeout;
    private final Duration drainTimeout;
    private final Duration shutdownTimeout;
    private volatile S bound;

    BoundServerLifecycle(Duration bindTimeout, Duration drainTimeout, Duration shutdownTimeout) {
        this.bindTimeout = Objects.requireNonNull(bindTimeout, "bindTimeout");
        this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    /** Binds, waiting at most {@code timeout}; throws what the bind failed with. */
    abstract S bind(Duration timeout);

    /** True once {@code server} is disposed (by stop, or by itself: its device was removed). */
    abstract boolean isDisposed(S server);

    /**
     * Stops {@code server} accepting and starts closing it, letting open connections work for at most
     * {@code drain} first (zero: at once); completes (never errors) once it is closed.
     */
    abstract Mono<Void> close(S server, Duration drain);

    /** Closes {@code server} at once: what stop does when {@link #close} did not finish in time. */
    abstract void disposeNow(S server);

    /** The server's address, for the log line of a close that did not finish. */
    abstract String describe(S server);

    /** The running server while running, else null. */
    @Nullable
    final S bound() {
        return bound;
    }

    /**
     * Binds and waits at most the bind timeout. A failure (the engine's "cannot listen on ...", Reactor's
     * {@code IllegalStateException} on timeout) fails the context start. A server that disposed itself is bound
     * anew.
     */
    @Override
    public final synchronized void start() {
        if (!isRunning()) {
            bound = bind(bindTimeout);
        }
    }

    /** As {@link #stop(Runnable)}, waiting for it: at most the drain timeout plus the shutdown timeout. */
    @Override
    public final void stop() {
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
     * them, and calls {@code callback} once they are closed or the shutdown timeout passed (then the server is
     * disposed at once and the close that did not finish is logged). Returns at once, so that the context's
     * {@code spring.lifecycle.timeout-per-shutdown-phase} bounds how long the context waits.
     */
    @Override
    public final void stop(Runnable callback) {
        S s;
        synchronized (this) {
            s = bound;
            bound = null;
        }
        if (s == null) {
            callback.run();
            return;
        }
        Duration limit = drainTimeout.plus(shutdownTimeout);
        Mono<Void> closed;
        try {
            closed = close(s, drainTimeout).onErrorResume(e -> Mono.empty());
        } catch (RuntimeException e) {
            closed = Mono.error(e);
        }
        closed.timeout(limit, Mono.defer(() -> {
                    disposeNow(s);
                    LOG.warn("the server over RDMA on " + describe(s) + " had connections still closing after "
                            + limit + " (its drain and shutdown timeouts): stopped waiting");
                    return Mono.empty();
                }))
                .doFinally(signal -> callback.run())
                .subscribe(v -> { }, e -> LOG.warn("closing the server over RDMA on " + describe(s) + " failed", e));
    }

    /** True while bound and not disposed (a server disposes itself when its device was removed). */
    @Override
    public final boolean isRunning() {
        S s = bound;
        return s != null && !isDisposed(s);
    }

    /**
     * False, as Spring Boot's web server: pausing a context (Spring Test's context cache does) would close every
     * RDMA connection, and restarting would bind again, on another port when the port is 0.
     */
    @Override
    public final boolean isPauseable() {
        return false;
    }

    @Override
    public final int getPhase() {
        return RdmaServerLifecycle.PHASE;
    }
}
