package io.reactiverdma.reactive.impl.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import io.reactiverdma.reactive.OperationType;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's meters, under {@code rdma.} (Micrometer naming: dots, base units, tags for dimensions).
 * Meters are created once; recording on the poller thread looks them up in arrays, allocating nothing.
 * <ul>
 *   <li>{@code rdma.operations} (counter; tags {@code op}, {@code outcome} = success|error|flushed)</li>
 *   <li>{@code rdma.bytes} (counter, bytes; tag {@code op}): payload bytes of successful operations</li>
 *   <li>{@code rdma.operation.latency} (timer; tag {@code op}): post to completion</li>
 *   <li>{@code rdma.outstanding} (gauge): work requests posted and not completed</li>
 *   <li>{@code rdma.poll.batch} (summary): completions per non-empty poll</li>
 *   <li>{@code rdma.completion.errors} (counter; tag {@code status}): failed completions other than flushes</li>
 *   <li>{@code rdma.connections} (gauge): open connections</li>
 *   <li>{@code rdma.credits.waiting} (gauge): connections whose next message waits for the peer's credits</li>
 *   <li>{@code rdma.completions.stale} (counter): completions whose wr_id named no live operation</li>
 * </ul>
 */
public abstract class EngineMetrics {
    public static final EngineMetrics NOOP = new Noop();
    private static volatile EngineMetrics global;

    /** The registry-backed metrics (Micrometer's global registry), created on first use. */
    public static EngineMetrics of(boolean enabled) {
        if (!enabled) {
            return NOOP;
        }
        EngineMetrics m = global;
        if (m == null) {
            synchronized (EngineMetrics.class) {
                m = global;
                if (m == null) {
                    m = new Recording(Metrics.globalRegistry);
                    global = m;
                }
            }
        }
        return m;
    }

    public abstract void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes);

    public abstract void completionError(String statusName);

    public abstract void pollBatch(int n);

    public abstract void staleCompletion();

    public abstract void outstanding(int delta);

    public abstract void connections(int delta);

    public abstract void creditsWaiting(int delta);

    private static final class Noop extends EngineMetrics {
        @Override
        public void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long bytes) {
        }

        @Override
        public void completionError(String statusName) {
        }

        @Override
        public void pollBatch(int n) {
        }

        @Override
        public void staleCompletion() {
        }

        @Override
        public void outstanding(int delta) {
        }

        @Override
        public void connections(int delta) {
        }

        @Override
        public void creditsWaiting(int delta) {
        }
    }

    /** Backed by a registry; public for tests that pass their own. */
    public static final class Recording extends EngineMetrics {
        private final MeterRegistry registry;
        private final Map<OperationType, Counter[]> operations = new EnumMap<>(OperationType.class);
        private final Map<OperationType, Counter> bytes = new EnumMap<>(OperationType.class);
        private final Map<OperationType, Timer> latency = new EnumMap<>(OperationType.class);
        private final Map<String, Counter> errors = new ConcurrentHashMap<>();
        private final DistributionSummary batch;
        private final Counter stale;
        private final AtomicLong outstanding = new AtomicLong();
        private final AtomicLong connections = new AtomicLong();
        private final AtomicLong creditsWaiting = new AtomicLong();

        public Recording(MeterRegistry registry) {
            this.registry = registry;
            for (OperationType op : OperationType.values()) {
                String tag = op.tag();
                operations.put(op, new Counter[] {
                        counter("rdma.operations", "work requests completed", "op", tag, "outcome", "success"),
                        counter("rdma.operations", "work requests completed", "op", tag, "outcome", "error"),
                        counter("rdma.operations", "work requests completed", "op", tag, "outcome", "flushed")});
                bytes.put(op, Counter.builder("rdma.bytes").baseUnit("bytes")
                        .description("payload bytes of successful operations").tag("op", tag).register(registry));
                latency.put(op, Timer.builder("rdma.operation.latency")
                        .description("time from post to completion").tag("op", tag).register(registry));
            }
            batch = DistributionSummary.builder("rdma.poll.batch").description("completions per non-empty poll")
                    .register(registry);
            stale = Counter.builder("rdma.completions.stale")
                    .description("completions whose wr_id named no live operation").register(registry);
            Gauge.builder("rdma.outstanding", outstanding, AtomicLong::get)
                    .description("work requests posted and not completed").register(registry);
            Gauge.builder("rdma.connections", connections, AtomicLong::get).description("open connections")
                    .register(registry);
            Gauge.builder("rdma.credits.waiting", creditsWaiting, AtomicLong::get)
                    .description("connections whose next message waits for the peer's flow-control credits").register(registry);
        }

        private Counter counter(String name, String description, String... tags) {
            return Counter.builder(name).description(description).tags(tags).register(registry);
        }

        @Override
        public void completed(OperationType op, boolean success, boolean flushed, long latencyNs, long nBytes) {
            operations.get(op)[success ? 0 : flushed ? 2 : 1].increment();
            if (success) {
                latency.get(op).record(latencyNs, TimeUnit.NANOSECONDS);
                if (nBytes > 0) {
                    bytes.get(op).increment(nBytes);
                }
            }
        }

        @Override
        public void completionError(String statusName) {
            errors.computeIfAbsent(statusName, s -> Counter.builder("rdma.completion.errors")
                    .description("failed completions other than flushes, by status").tag("status", s)
                    .register(registry)).increment();
        }

        @Override
        public void pollBatch(int n) {
            batch.record(n);
        }

        @Override
        public void staleCompletion() {
            stale.increment();
        }

        @Override
        public void outstanding(int delta) {
            outstanding.addAndGet(delta);
        }

        @Override
        public void connections(int delta) {
            connections.addAndGet(delta);
        }

        @Override
        public void creditsWaiting(int delta) {
            creditsWaiting.addAndGet(delta);
        }
    }
}
