package io.reactiverdma.test;

import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

/** The {@link LoopbackRdma}: one {@link LoopbackStack} and one {@link RdmaEngine} per start. */
final class DefaultLoopbackRdma extends LoopbackRdma {
    /** How long {@link #close()} waits for the engine to close what was opened on it. */
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(30);
    /** The started one the provider routes to; null when none is. */
    private static final AtomicReference<DefaultLoopbackRdma> ACTIVE = new AtomicReference<>();

    private volatile LoopbackStack stack;
    private volatile RdmaEngine engine;

    /** The engine of the started {@code LoopbackRdma}, or null when none is started. */
    static RdmaEngine activeEngine() {
        DefaultLoopbackRdma a = ACTIVE.get();
        return a == null ? null : a.engine;
    }

    @Override
    public synchronized LoopbackRdma start() {
        if (ACTIVE.get() != null) {
            throw alreadyStarted();
        }
        // Complete before it is published: the provider must never see it half made.
        LoopbackStack s = LoopbackStack.create();
        stack = s;
        engine = new RdmaEngine(s);
        if (!ACTIVE.compareAndSet(null, this)) {
            stack = null;
            engine = null;
            s.close();
            throw alreadyStarted();
        }
        return this;
    }

    private IllegalStateException alreadyStarted() {
        return new IllegalStateException(ACTIVE.get() == this ? "this LoopbackRdma is started already"
                : "another LoopbackRdma is started in this JVM: close it first");
    }

    @Override
    public String host() {
        return "127.0.0.1";
    }

    @Override
    public FaultInjection faults() {
        LoopbackStack s = stack;
        if (s == null) {
            throw new IllegalStateException("LoopbackRdma not started");
        }
        return new StackFaultInjection(s);
    }

    @Override
    public synchronized void close() {
        LoopbackStack s = stack;
        if (s == null) {
            return;
        }
        try {
            engine.shutdown().block(SHUTDOWN_WAIT);
        } finally {
            stack = null;
            engine = null;
            ACTIVE.compareAndSet(this, null);
            s.close();
        }
    }
}
