package io.reactiverdma.samples.common;

import org.junit.jupiter.api.Test;
import reactor.core.publisher.Sinks;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How a sample server's main ends (issue 24, review finding 11a: echo, kv and bulk server modes waited for
 * ever on a latch only the shutdown hook counted down, so a server that disposed itself, on device removal,
 * left a process that listened on nothing and never exited).
 */
class ServerRunTest {
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final AtomicReference<Thread> hook = new AtomicReference<>();
    private final ServerRun.Hooks hooks = new ServerRun.Hooks() {
        @Override
        public void add(Thread h) {
            hook.set(h);
        }

        @Override
        public boolean remove(Thread h) {
            return hook.compareAndSet(h, null);
        }
    };

    private CompletableFuture<Integer> runServer(Sinks.Empty<Void> disposed, AtomicInteger closes) {
        return CompletableFuture.supplyAsync(() -> ServerRun.untilStopped("test server", disposed.asMono(), () -> {
            closes.incrementAndGet();
            disposed.tryEmitEmpty();
        }, () -> { }, new PrintStream(err, true, StandardCharsets.UTF_8), hooks));
    }

    @Test
    void aServerThatClosedItselfEndsTheRunWithStatusOne() throws Exception {
        Sinks.Empty<Void> disposed = Sinks.empty();
        AtomicInteger closes = new AtomicInteger();
        CompletableFuture<Integer> status = runServer(disposed, closes);
        disposed.tryEmitEmpty(); // device removal: the server disposes itself
        assertEquals(1, status.get(30, TimeUnit.SECONDS));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("test server: FAILED: the server closed itself"),
                err.toString(StandardCharsets.UTF_8));
        assertEquals(null, hook.get(), "the shutdown hook was left registered");
    }

    @Test
    void aServerStoppedByItsShutdownHookEndsTheRunWithStatusZero() throws Exception {
        Sinks.Empty<Void> disposed = Sinks.empty();
        AtomicInteger closes = new AtomicInteger();
        CompletableFuture<Integer> status = runServer(disposed, closes);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (hook.get() == null && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        hook.get().start(); // Ctrl-C
        assertEquals(0, status.get(30, TimeUnit.SECONDS));
        assertEquals(1, closes.get());
    }
}
