package io.reactiverdma.samples.common;

import reactor.core.publisher.Mono;

import java.io.PrintStream;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How a sample server's {@code main} waits: until Ctrl-C, when a shutdown hook closes the server (exit status
 * 0), or until the server disposed itself, for example when its device was removed (exit status 1, so that a
 * supervisor such as systemd or Kubernetes sees it end and restarts it, rather than a process that listens
 * on nothing).
 */
public final class ServerRun {
    /** Where shutdown hooks go: the JVM's runtime, or a test's stand-in. */
    interface Hooks {
        void add(Thread hook);

        /** False when the JVM is already shutting down (the hook runs, or ran). */
        boolean remove(Thread hook);
    }

    private static final Hooks RUNTIME = new Hooks() {
        @Override
        public void add(Thread hook) {
            Runtime.getRuntime().addShutdownHook(hook);
        }

        @Override
        public boolean remove(Thread hook) {
            try {
                return Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                return false;
            }
        }
    };

    private ServerRun() {
    }

    /**
     * Blocks until the server ends; returns the exit status.
     *
     * @param name      the sample's name, the prefix of the line printed when the server closed itself
     * @param onDispose the server's {@code onDispose()}: completes (or errors) once it stopped listening
     * @param close     closes the server; the shutdown hook runs it, then {@code stopped}
     * @param stopped   prints the closing line once the hook closed the server
     */
    public static int untilStopped(String name, Mono<Void> onDispose, Runnable close, Runnable stopped,
            PrintStream err) {
        return untilStopped(name, onDispose, close, stopped, err, RUNTIME);
    }

    static int untilStopped(String name, Mono<Void> onDispose, Runnable close, Runnable stopped, PrintStream err,
            Hooks hooks) {
        Objects.requireNonNull(onDispose, "onDispose");
        Objects.requireNonNull(close, "close");
        Objects.requireNonNull(stopped, "stopped");
        AtomicBoolean hookStarted = new AtomicBoolean();
        CountDownLatch hookDone = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            hookStarted.set(true);
            try {
                close.run();
                stopped.run();
            } finally {
                hookDone.countDown();
            }
        }, name + "-shutdown");
        hooks.add(hook);
        Throwable failure = null;
        try {
            onDispose.block();
        } catch (RuntimeException e) {
            failure = e;
        }
        if (hookStarted.get() || !hooks.remove(hook)) {
            awaitQuietly(hookDone); // Ctrl-C: the hook closes the server and prints its last line
            return 0;
        }
        err.println(name + ": FAILED: the server closed itself" + (failure == null ? "" : ": " + failure)
                + " (see the log above); exiting");
        close.run(); // idempotent: releases what the server still held
        return 1;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
