package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.rsocket.RdmaServerChannel;
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
 * The auto-configured RSocket server over RDMA, bound in the same {@link SmartLifecycle} phase as the RDMA server
 * ({@link RdmaServerLifecycle#PHASE}: after the web server starts, stopped before it stops). Stopping stops
 * listening and closes every RSocket connection without blocking the context's shutdown thread; the callback runs
 * once they are closed or the shutdown timeout passed. Not pauseable.
 */
public class RdmaRSocketServerLifecycle implements SmartLifecycle {
    private static final Log LOG = LogFactory.getLog(RdmaRSocketServerLifecycle.class);

    private final Mono<RdmaServerChannel> binder;
    private final Duration bindTimeout;
    private final Duration shutdownTimeout;
    private volatile RdmaServerChannel bound;

    /**
     * {@code binder} (RSocket's {@code RSocketServer.bind(transport)}) is subscribed on start and waited for at
     * most {@code bindTimeout}; the channel it emits is disposed on stop, waited for at most
     * {@code shutdownTimeout}.
     */
    public RdmaRSocketServerLifecycle(Mono<RdmaServerChannel> binder, Duration bindTimeout, Duration shutdownTimeout) {
        this.binder = Objects.requireNonNull(binder, "binder");
        this.bindTimeout = Objects.requireNonNull(bindTimeout, "bindTimeout");
        this.shutdownTimeout = Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
    }

    /** The running server while running, else null. */
    @Nullable
    public RdmaServerChannel server() {
        return bound;
    }

    /**
     * Binds and waits at most the bind timeout; a failure (the engine's "cannot listen on ..." or Reactor's
     * timeout) fails the context start.
     */
    @Override
    public synchronized void start() {
        if (!isRunning()) {
            bound = binder.block(bindTimeout);
        }
    }

    /** As {@link #stop(Runnable)}, waiting for it at most the shutdown timeout (plus a second). */
    @Override
    public void stop() {
        CountDownLatch stopped = new CountDownLatch(1);
        stop(stopped::countDown);
        try {
            stopped.await(shutdownTimeout.plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Disposes the server and calls {@code callback} once it closed, or after the shutdown timeout (logged). */
    @Override
    public void stop(Runnable callback) {
        RdmaServerChannel s;
        synchronized (this) {
            s = bound;
            bound = null;
        }
        if (s == null) {
            callback.run();
            return;
        }
        s.dispose();
        s.onClose()
                .timeout(shutdownTimeout, Mono.fromRunnable(() -> LOG.warn("the RSocket server over RDMA on "
                        + s.address() + " had connections still closing after " + shutdownTimeout
                        + " (its shutdown timeout): stopped waiting")))
                .doFinally(signal -> callback.run())
                .subscribe(v -> { }, e -> { });
    }

    /** True while bound and not closed. */
    @Override
    public boolean isRunning() {
        RdmaServerChannel s = bound;
        return s != null && !s.isDisposed();
    }

    /** False, as the web server and the RDMA server: pausing would close every connection. */
    @Override
    public boolean isPauseable() {
        return false;
    }

    @Override
    public int getPhase() {
        return RdmaServerLifecycle.PHASE;
    }
}
