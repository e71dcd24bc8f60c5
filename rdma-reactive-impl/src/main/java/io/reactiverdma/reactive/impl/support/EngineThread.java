package io.reactiverdma.reactive.impl.support;

import reactor.core.scheduler.NonBlocking;

/**
 * The engine's own threads (completion pollers, the rdma_cm event loop). Marked {@link NonBlocking}, like
 * Reactor Netty's event loops: a {@code block()} called on one by a callback fails at once with Reactor's
 * IllegalStateException instead of deadlocking the thread that would have to deliver the result.
 */
public final class EngineThread extends Thread implements NonBlocking {
    public EngineThread(Runnable task, String name) {
        super(task, name);
        setDaemon(true);
    }
}
