package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaResources;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * With {@code reactive-rdma.release-engine-on-close=true}: when the context closes (after its RDMA server and
 * other lifecycle beans stopped), releases the engine's process-wide resources ({@link RdmaResources#disposeLater()}:
 * protection domains, pinned pool memory, poller and rdma_cm threads), so a DevTools restart or a closed test
 * context leaves nothing behind. The engine is shared by the whole JVM, so only the last open context that asked
 * for it releases it; RDMA used outside those contexts in the same JVM ends with it.
 */
final class RdmaEngineRelease implements DisposableBean {
    private static final Log LOG = LogFactory.getLog(RdmaEngineRelease.class);
    /** disposeLater waits about 10 s at most for close sequences; a little more before giving up here. */
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static final AtomicInteger OPEN = new AtomicInteger();

    private final Supplier<Mono<Void>> release;
    private boolean released;

    RdmaEngineRelease() {
        this(RdmaResources::disposeLater);
    }

    /** With {@code release} in place of {@link RdmaResources#disposeLater()} (tests). */
    RdmaEngineRelease(Supplier<Mono<Void>> release) {
        this.release = Objects.requireNonNull(release, "release");
        OPEN.incrementAndGet();
    }

    @Override
    public synchronized void destroy() {
        if (released) {
            return;
        }
        released = true;
        if (OPEN.decrementAndGet() > 0) {
            return;
        }
        try {
            release.get().block(WAIT);
        } catch (RuntimeException e) {
            LOG.warn("releasing the RDMA engine's resources did not finish in " + WAIT, e);
        }
    }
}
