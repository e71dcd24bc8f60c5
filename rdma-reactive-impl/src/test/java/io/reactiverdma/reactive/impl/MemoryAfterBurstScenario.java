package io.reactiverdma.reactive.impl;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory comes back after a burst, on any stack (the loopback device on the host, rxe in the VM): an echo
 * server with one steady client; a burst of {@code n} more clients that all exchange a checked message and
 * leave. The pool's registered (pinned) bytes, read from the {@code rdma.memory.registered} gauge, go up
 * during the burst and back to the steady baseline within the pool's idle time plus slack after it; a
 * pooled buffer the application still holds keeps its slab (and stays usable); a second burst works the
 * same. Prints a {@code MEMORY-BURST} line per phase: pinned, receive memory, heap, direct memory, RSS.
 * <p>
 * The engine is made with the pool's release settings the test gives (a short idle time, nothing kept), and
 * the server, its clients and the steady client all share it: the numbers are one process's.
 */
final class MemoryAfterBurstScenario implements AutoCloseable {
    private final RdmaEngine engine;
    private final String host;
    private final Duration wait;
    private final Duration releaseWithin;
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<RdmaConnection> steady = new ArrayList<>();
    private DisposableRdmaServer server;

    /** {@code releaseWithin}: the pool's idle time plus the slack this stack needs. */
    MemoryAfterBurstScenario(RdmaEngine engine, String host, Duration wait, Duration releaseWithin) {
        this.engine = engine;
        this.host = host;
        this.wait = wait;
        this.releaseWithin = releaseWithin;
    }

    private RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost(host).withPort(0)
                // A burst of connects at once under emulation: set-up is serial on the rdma_cm threads.
                .withOption(RdmaOption.CONNECT_TIMEOUT, wait)
                .withMetrics(true, () -> MicrometerRdmaRecorder.of(registry));
    }

    private long pinned() {
        return (long) registry.get("rdma.memory.registered").gauge().value();
    }

    private long receiveMemory() {
        return (long) registry.get("rdma.receive.memory").gauge().value();
    }

    private double slabsReleased() {
        return registry.get("rdma.memory.slabs.released").counter().count();
    }

    private RdmaConnection connect() {
        RdmaConnection c = engine.connect(config().withPort(server.port())).block(wait);
        assertNotNull(c);
        return c;
    }

    /** Sends one numbered message on each connection and checks that it comes back unchanged. */
    private void exchange(List<RdmaConnection> connections, String phase) {
        Flux.range(0, connections.size()).flatMap(i -> {
            RdmaConnection c = connections.get(i);
            byte[] text = (phase + " connection " + i).getBytes(StandardCharsets.UTF_8);
            Mono<Void> back = c.receive().next().doOnNext(m -> {
                try {
                    assertEquals(new String(text, StandardCharsets.UTF_8),
                            new String(m.toByteArray(), StandardCharsets.UTF_8), phase + ": echo " + i);
                } finally {
                    m.release();
                }
            }).then();
            return Mono.when(back, c.send(ByteBuffer.wrap(text)));
        }, connections.size()).then().block(wait);
    }

    /** Waits (polling: the release runs on the engine's timer) until {@code value} is {@code expected}. */
    private void await(String what, LongSupplier value, long expected, Duration within) {
        long deadline = System.nanoTime() + within.toNanos();
        while (value.getAsLong() != expected && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(20_000_000L);
        }
        assertEquals(expected, value.getAsLong(), what + " within " + within);
    }

    /** Runs the whole scenario with bursts of {@code n} clients. */
    void run(int n) {
        server = engine.bind(config(), c -> c.send(c.receive().map(m -> {
            try {
                return ByteBuffer.wrap(m.toByteArray());
            } finally {
                m.release();
            }
        }))).block(wait);
        assertNotNull(server);
        steady.add(connect());
        exchange(steady, "steady");
        BufferPool pool = (BufferPool) steady.get(0).memory();
        // The steady state: what the steady connection (both ends) holds, once the warm-up's idle slabs (the
        // send copies') went back.
        await("the pool's gauge is its registered bytes", this::pinned, pool.registeredBytes(), wait);
        long warm = pool.registeredBytes();
        long baseline = awaitSettled(pool);
        print("baseline", baseline);
        assertTrue(baseline <= warm);

        for (int round = 1; round <= 2; round++) {
            List<RdmaConnection> burst = Flux.range(0, n).flatMap(i -> engine.connect(config().withPort(server.port())), 64)
                    .collectList().block(wait);
            assertNotNull(burst);
            assertEquals(n, burst.size());
            exchange(burst, "burst " + round);
            assertEquals(n + 1, server.connectionCount());
            long during = pinned();
            print("during burst " + round + " (" + n + " clients)", during);
            assertTrue(during > baseline, "the burst registered more: " + during + " > " + baseline);
            // The application keeps one pooled buffer of a size class nothing else uses: its slab must stay.
            RegisteredBuffer kept = round == 1 ? burst.get(0).memory().allocate(1 << 20) : null;
            long keptSlab = round == 1 ? pool.maxAllocationSize() : 0;
            double releasedBefore = slabsReleased();

            Flux.fromIterable(burst).flatMap(c -> {
                c.dispose();
                return c.onDispose();
            }).then().block(wait);
            await("server connections after the burst", server::connectionCount, 1, wait);
            await("pinned bytes back to the baseline" + (kept != null ? " plus the held buffer's slab" : ""),
                    this::pinned, baseline + keptSlab, releaseWithin);
            print("after burst " + round, pinned());
            assertTrue(slabsReleased() > releasedBefore, "released slabs counted");
            if (kept != null) {
                ByteBuffer view = kept.buffer();
                view.putLong(view.capacity() - 8, 0x5eed_5eedL);
                assertEquals(0x5eed_5eedL, kept.buffer().getLong(view.capacity() - 8), "the held buffer works");
                kept.release();
                await("pinned bytes back to the baseline once the held buffer went", this::pinned, baseline,
                        releaseWithin);
            }
            exchange(steady, "steady after burst " + round);
        }
    }

    /** The registered bytes once the idle slabs (the warm-up's send copies) went back. */
    private long awaitSettled(BufferPool pool) {
        await("idle slabs left", pool::idleBytes, 0, releaseWithin);
        await("the gauge follows the pool", this::pinned, pool.registeredBytes(), wait);
        return pinned();
    }

    private void print(String phase, long pinned) {
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
        Runtime rt = Runtime.getRuntime();
        System.out.printf("MEMORY-BURST %-28s pinned=%d receiveMemory=%d heapUsed=%d heapCommitted=%d "
                        + "direct=%d %s%n", phase, pinned, receiveMemory(), rt.totalMemory() - rt.freeMemory(),
                rt.totalMemory(), direct.getMemoryUsed(), rss());
    }

    /** VmRSS and its parts from /proc/self/status (kB), as the kernel counts them. */
    static String rss() {
        try {
            StringBuilder b = new StringBuilder();
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS") || line.startsWith("RssAnon") || line.startsWith("RssFile")
                        || line.startsWith("RssShmem") || line.startsWith("VmLck") || line.startsWith("VmPin")) {
                    b.append(line.replaceAll("\\s+", "")).append(' ');
                }
            }
            return b.toString().trim();
        } catch (IOException e) {
            return "rss=unknown";
        }
    }

    @Override
    public void close() {
        for (RdmaConnection c : steady) {
            c.dispose();
            c.onDispose().block(wait);
        }
        if (server != null) {
            server.disposeNow(wait);
        }
    }
}
