package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.rsocket.RdmaServerChannel;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.time.Duration;
import java.util.Objects;

/**
 * The auto-configured RSocket server over RDMA, a {@link SmartLifecycle} bound and stopped as the RDMA server
 * ({@link RdmaServerLifecycle}: its phase, after the web server starts and before it stops; bound again when it
 * disposed itself; not pauseable). Stopping stops listening and closes every RSocket connection (streams in
 * flight end: the requester's see the connection close) without blocking the context's shutdown thread; the
 * callback runs once they are closed or the shutdown timeout passed, when the server is disposed at once and the
 * close that did not finish is logged.
 */
public class RdmaRSocketServerLifecycle extends BoundServerLifecycle<RdmaServerChannel> {
    private final Mono<RdmaServerChannel> binder;

    /**
     * {@code binder} (RSocket's {@code RSocketServer.bind(transport)}) is subscribed on start and waited for at
     * most {@code bindTimeout}; the channel it emits is disposed on stop, waited for at most
     * {@code shutdownTimeout}.
     */
    public RdmaRSocketServerLifecycle(Mono<RdmaServerChannel> binder, Duration bindTimeout, Duration shutdownTimeout) {
        super(bindTimeout, Duration.ZERO, shutdownTimeout);
        this.binder = Objects.requireNonNull(binder, "binder");
    }

    /** The running server while running, else null. */
    @Nullable
    public RdmaServerChannel server() {
        return bound();
    }

    @Override
    RdmaServerChannel bind(Duration timeout) {
        return binder.block(timeout);
    }

    @Override
    boolean isDisposed(RdmaServerChannel s) {
        return s.isDisposed();
    }

    /** RSocket's server has no drain: its connections close at once. */
    @Override
    Mono<Void> close(RdmaServerChannel s, Duration drain) {
        s.dispose();
        return s.onClose();
    }

    @Override
    void disposeNow(RdmaServerChannel s) {
        s.dispose();
    }

    @Override
    String describe(RdmaServerChannel s) {
        return s.address().getHostString() + ":" + s.address().getPort();
    }
}
