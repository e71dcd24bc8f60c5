package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.context.SmartLifecycle;

import java.time.Duration;
import java.util.Objects;

/**
 * The auto-configured RDMA server, bound in a {@link SmartLifecycle} phase: when the context starts, right after
 * the web server started (so no RDMA connection reaches the handler while the application cannot yet serve
 * HTTP), also with lazy initialisation; when it stops, after the web server's graceful shutdown drained HTTP
 * requests and before the web server stops. Stopping disposes the server (no new connections, every connection
 * closed) and waits at most the shutdown timeout.
 */
public class RdmaServerLifecycle implements SmartLifecycle {
    /**
     * One above Spring Boot's web server start/stop phase ({@code WebServerApplicationContext
     * .START_STOP_LIFECYCLE_PHASE}, {@code Integer.MAX_VALUE - 2048}) and below its graceful shutdown phase
     * ({@code Integer.MAX_VALUE - 1024}): starts after the web server, stops before it.
     */
    public static final int PHASE = Integer.MAX_VALUE - 2048 + 1;

    private final RdmaServer server;
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
        this.server = Objects.requireNonNull(server, "server");
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
     * {@code IllegalStateException} on timeout) fails the context start.
     */
    @Override
    public synchronized void start() {
        if (bound == null) {
            bound = server.bindNow(bindTimeout);
        }
    }

    /**
     * Stops accepting, lets open connections work for at most the drain timeout (none when zero), then closes
     * them and waits at most the shutdown timeout for them to close.
     */
    @Override
    public synchronized void stop() {
        DisposableRdmaServer s = bound;
        bound = null;
        if (s == null) {
            return;
        }
        if (drainTimeout.isZero()) {
            s.disposeNow(shutdownTimeout);
        } else {
            s.disposeGracefully(drainTimeout).block(drainTimeout.plus(shutdownTimeout));
        }
    }

    @Override
    public boolean isRunning() {
        return bound != null;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
