package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * The auto-configured RDMA server, bound in a {@link SmartLifecycle} phase: when the context starts, after the
 * web server started (so no RDMA connection reaches the handler while the application cannot yet serve HTTP),
 * also with lazy initialisation; when it stops, in the web server's graceful-shutdown phase (RDMA connections
 * drain while HTTP requests drain) and before the web server stops. Stopping disposes the server (no new connections, every connection
 * closed, after the drain timeout when one is set) without blocking the context's shutdown thread: the context
 * waits for it at most its {@code spring.lifecycle.timeout-per-shutdown-phase}. Not pauseable, as the web
 * server. The RSocket server over RDMA ({@link RdmaRSocketServerLifecycle}) is bound and stopped the same way.
 */
public class RdmaServerLifecycle extends BoundServerLifecycle<DisposableRdmaServer> {
    /**
     * Spring Boot's web server graceful-shutdown phase ({@code WebServerGracefulShutdownLifecycle
     * .SMART_LIFECYCLE_PHASE}, {@code Integer.MAX_VALUE - 1024}), above its start/stop phase
     * ({@code Integer.MAX_VALUE - 2048}): starts after the web server started; on shutdown drains while HTTP
     * drains (both under the one per-phase timeout, not one after the other), before the web server stops.
     */
    public static final int PHASE = Integer.MAX_VALUE - 1024;

    private final RdmaServer server;
    private final Function<Duration, DisposableRdmaServer> binder;

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
        this(server, Objects.requireNonNull(server, "server")::bindNow, bindTimeout, drainTimeout, shutdownTimeout);
    }

    /** With {@code binder} in place of {@link RdmaServer#bindNow(Duration)}: tests bind a server of their own. */
    RdmaServerLifecycle(RdmaServer server, Function<Duration, DisposableRdmaServer> binder, Duration bindTimeout,
            Duration drainTimeout, Duration shutdownTimeout) {
        super(bindTimeout, drainTimeout, shutdownTimeout);
        this.server = Objects.requireNonNull(server, "server");
        this.binder = Objects.requireNonNull(binder, "binder");
    }

    /** The configured server (properties, handler, customizers applied), bound or not. */
    public RdmaServer configuration() {
        return server;
    }

    /** The bound server while running, else null. */
    @Nullable
    public DisposableRdmaServer server() {
        return bound();
    }

    @Override
    DisposableRdmaServer bind(Duration timeout) {
        return binder.apply(timeout);
    }

    @Override
    boolean isDisposed(DisposableRdmaServer s) {
        return s.isDisposed();
    }

    @Override
    Mono<Void> close(DisposableRdmaServer s, Duration drain) {
        if (drain.isZero()) {
            s.dispose();
            return s.onDispose();
        }
        return s.disposeGracefully(drain); // disposes after the drain itself
    }

    @Override
    void disposeNow(DisposableRdmaServer s) {
        s.dispose();
    }

    @Override
    String describe(DisposableRdmaServer s) {
        return s.host() + ":" + s.port();
    }
}
