package io.reactiverdma.reactive.impl.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The engine's Micrometer meters: names, tags, what is recorded, where (the global registry for
 * {@code metrics(true)}, only the given one for {@code metrics(true, recorder)}), and that NOOP records nothing.
 */
public class EngineMetricsHostTest {
    private static final InetSocketAddress PEER = new InetSocketAddress("10.77.0.2", 40000);

    /** A connection's metrics on device rxe0 recording into {@code r}, as metrics(true, recorder) configures. */
    public static EngineMetrics into(MeterRegistry r) {
        return EngineMetrics.of(RdmaTransportConfig.defaults().withMetrics(true, () -> MicrometerRdmaRecorder.of(r)),
                "rxe0", PEER);
    }

    private final List<MeterRegistry> addedToGlobal = new ArrayList<>();

    @AfterEach
    void cleanUpGlobalRegistry() {
        for (MeterRegistry r : addedToGlobal) {
            Metrics.globalRegistry.remove(r);
            r.close();
        }
        addedToGlobal.clear();
    }

    private SimpleMeterRegistry addToGlobal() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        Metrics.globalRegistry.add(r);
        addedToGlobal.add(r);
        return r;
    }

    private static Counter operations(MeterRegistry r, OperationType op, String outcome) {
        Counter c = r.find("rdma.operations").tags("op", op.tag(), "outcome", outcome).counter();
        assertNotNull(c, "rdma.operations{op=" + op.tag() + ",outcome=" + outcome + "}");
        return c;
    }

    private static Counter bytes(MeterRegistry r, OperationType op) {
        Counter c = r.find("rdma.bytes").tag("op", op.tag()).counter();
        assertNotNull(c, "rdma.bytes{op=" + op.tag() + "}");
        return c;
    }

    private static Timer latency(MeterRegistry r, OperationType op) {
        Timer t = r.find("rdma.operation.latency").tag("op", op.tag()).timer();
        assertNotNull(t, "rdma.operation.latency{op=" + op.tag() + "}");
        return t;
    }

    private static double gauge(MeterRegistry r, String name) {
        Gauge g = r.find(name).gauge();
        assertNotNull(g, name);
        return g.value();
    }

    /** Every rdma.* meter's measurements, by meter id: to show that nothing changed. */
    private static Map<String, List<Double>> snapshot(MeterRegistry r) {
        Map<String, List<Double>> m = new TreeMap<>();
        for (Meter meter : r.getMeters()) {
            if (!meter.getId().getName().startsWith("rdma.")) {
                continue;
            }
            List<Double> values = new ArrayList<>();
            for (Measurement x : meter.measure()) {
                values.add(x.getValue());
            }
            m.put(meter.getId().toString(), values);
        }
        return m;
    }

    @Test
    void everyMeterIsRegisteredUpFrontWithItsTags() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        into(r).connections(1); // what a device's first connection does when its queue pair exists
        for (OperationType op : OperationType.values()) {
            for (String outcome : List.of("success", "error", "flushed")) {
                assertEquals(0, operations(r, op, outcome).count());
            }
            assertEquals("bytes", bytes(r, op).getId().getBaseUnit());
            assertEquals(0, latency(r, op).count());
        }
        assertEquals(OperationType.values().length * 3, r.find("rdma.operations").counters().size());
        assertNotNull(r.find("rdma.poll.batch").summary());
        assertNotNull(r.find("rdma.completions.stale").counter());
        assertEquals(0, gauge(r, "rdma.outstanding"));
        assertEquals(1, gauge(r, "rdma.connections"));
        assertEquals(0, gauge(r, "rdma.credits.waiting"));
        for (Meter meter : r.getMeters()) {
            assertEquals("rxe0", meter.getId().getTag("device"), meter.getId() + ": the device tag");
            assertNull(meter.getId().getTag("remote"), meter.getId() + ": no remote tag unless asked for");
        }
        assertNull(r.find("rdma.completion.errors").counter(), "error counters appear with their first status");
    }

    @Test
    void completionsAreCountedByOperationAndOutcome() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        EngineMetrics m = into(r);

        m.completed(OperationType.SEND, true, false, TimeUnit.MICROSECONDS.toNanos(5), 100);
        m.completed(OperationType.SEND, true, false, TimeUnit.MICROSECONDS.toNanos(15), 300);
        m.completed(OperationType.WRITE, false, true, 999, 4096);
        m.completed(OperationType.READ, false, false, 999, 4096);
        m.completed(OperationType.RECEIVE, true, false, 1_000, 0);

        assertEquals(2, operations(r, OperationType.SEND, "success").count());
        assertEquals(0, operations(r, OperationType.SEND, "error").count());
        assertEquals(400, bytes(r, OperationType.SEND).count(), "payload bytes of successes");
        Timer sendLatency = latency(r, OperationType.SEND);
        assertEquals(2, sendLatency.count());
        assertEquals(20_000, sendLatency.totalTime(TimeUnit.NANOSECONDS), 0.5);
        assertEquals(15_000, sendLatency.max(TimeUnit.NANOSECONDS), 0.5);

        assertEquals(1, operations(r, OperationType.WRITE, "flushed").count());
        assertEquals(0, operations(r, OperationType.WRITE, "error").count(), "a flush is not an error");
        assertEquals(0, operations(r, OperationType.WRITE, "success").count());
        assertEquals(0, bytes(r, OperationType.WRITE).count(), "no bytes for a flushed operation");
        assertEquals(0, latency(r, OperationType.WRITE).count(), "no latency for a flushed operation");

        assertEquals(1, operations(r, OperationType.READ, "error").count());
        assertEquals(0, bytes(r, OperationType.READ).count());
        assertEquals(0, latency(r, OperationType.READ).count());

        assertEquals(1, operations(r, OperationType.RECEIVE, "success").count());
        assertEquals(0, bytes(r, OperationType.RECEIVE).count(), "an empty message adds no bytes");
        assertEquals(1, latency(r, OperationType.RECEIVE).count());
    }

    @Test
    void errorsBatchesStaleCompletionsAndGaugesAreRecorded() {
        SimpleMeterRegistry r = new SimpleMeterRegistry();
        EngineMetrics m = into(r);

        m.completionError("REM_ACCESS_ERR");
        m.completionError("REM_ACCESS_ERR");
        m.completionError("RETRY_EXC_ERR");
        assertEquals(2, r.get("rdma.completion.errors").tag("status", "REM_ACCESS_ERR").counter().count());
        assertEquals(1, r.get("rdma.completion.errors").tag("status", "RETRY_EXC_ERR").counter().count());
        assertEquals(2, r.find("rdma.completion.errors").counters().size());

        m.pollBatch(3);
        m.pollBatch(16);
        DistributionSummary batch = r.get("rdma.poll.batch").summary();
        assertEquals(2, batch.count());
        assertEquals(19, batch.totalAmount());
        assertEquals(16, batch.max());

        m.staleCompletion();
        assertEquals(1, r.get("rdma.completions.stale").counter().count());

        m.outstanding(5);
        m.outstanding(-2);
        m.connections(1);
        m.connections(1);
        m.connections(-1);
        m.creditsWaiting(3);
        m.creditsWaiting(-1);
        assertEquals(3, gauge(r, "rdma.outstanding"));
        assertEquals(1, gauge(r, "rdma.connections"));
        assertEquals(2, gauge(r, "rdma.credits.waiting"));
    }

    @Test
    void enabledMetricsUseTheGlobalRegistryAndAreShared() {
        SimpleMeterRegistry r = addToGlobal();
        RdmaTransportConfig on = RdmaTransportConfig.defaults().withMetrics(true);
        EngineMetrics m = EngineMetrics.of(on, "rxe0", PEER);
        assertInstanceOf(EngineMetrics.Bound.class, m);
        assertSame(((EngineMetrics.Bound) m).recorder(), ((EngineMetrics.Bound) EngineMetrics.of(on, "rxe0", null))
                .recorder(), "one recorder (one set of gauges) for the global registry");
        m.connections(0); // registers the device's meters, so the values before can be read

        // Other tests may have moved the shared gauges: compare with the values before.
        double outstanding = gauge(r, "rdma.outstanding");
        double connections = gauge(r, "rdma.connections");
        double waiting = gauge(r, "rdma.credits.waiting");

        m.completed(OperationType.FETCH_AND_ADD, true, false, 2_000, 8);
        m.completed(OperationType.CREDIT_UPDATE, false, true, 0, 8);
        m.completionError("LOC_PROT_ERR");
        m.pollBatch(7);
        m.staleCompletion();
        m.outstanding(4);
        m.connections(2);
        m.creditsWaiting(1);
        try {
            assertEquals(1, operations(r, OperationType.FETCH_AND_ADD, "success").count());
            assertEquals(8, bytes(r, OperationType.FETCH_AND_ADD).count());
            assertEquals(1, latency(r, OperationType.FETCH_AND_ADD).count());
            assertEquals(1, operations(r, OperationType.CREDIT_UPDATE, "flushed").count());
            assertEquals(1, r.get("rdma.completion.errors").tag("status", "LOC_PROT_ERR").counter().count());
            assertEquals(1, r.get("rdma.poll.batch").summary().count());
            assertEquals(7, r.get("rdma.poll.batch").summary().totalAmount());
            assertEquals(1, r.get("rdma.completions.stale").counter().count());
            assertEquals(outstanding + 4, gauge(r, "rdma.outstanding"));
            assertEquals(connections + 2, gauge(r, "rdma.connections"));
            assertEquals(waiting + 1, gauge(r, "rdma.credits.waiting"));
        } finally {
            // Leave the shared gauges as they were for whoever runs next.
            m.outstanding(-4);
            m.connections(-2);
            m.creditsWaiting(-1);
        }
        assertEquals(outstanding, gauge(r, "rdma.outstanding"));
    }

    @Test
    void disabledMetricsAreNoopAndRecordNothing() {
        RdmaTransportConfig off = RdmaTransportConfig.defaults().withMetrics(false);
        assertSame(EngineMetrics.NOOP, EngineMetrics.of(off, "rxe0", PEER));
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        assertSame(EngineMetrics.NOOP, EngineMetrics.of(RdmaTransportConfig.defaults()
                .withMetrics(true, () -> MicrometerRdmaRecorder.of(own)).withMetrics(false), "rxe0", PEER),
                "metrics(false) after a recorder: off");
        SimpleMeterRegistry r = addToGlobal();
        int metersBefore = r.getMeters().size();
        Map<String, List<Double>> before = snapshot(r);

        EngineMetrics m = EngineMetrics.of(off, "rxe0", PEER);
        for (OperationType op : OperationType.values()) {
            m.completed(op, true, false, 1_000, 64);
            m.completed(op, false, true, 1_000, 64);
            m.completed(op, false, false, 1_000, 64);
        }
        m.completionError("REM_OP_ERR");
        m.pollBatch(9);
        m.staleCompletion();
        m.outstanding(3);
        m.connections(1);
        m.creditsWaiting(1);

        assertEquals(metersBefore, r.getMeters().size(), "NOOP registers no meter");
        assertEquals(before, snapshot(r), "and moves none");
        assertNull(r.find("rdma.completion.errors").tag("status", "REM_OP_ERR").counter());
    }

    @Test
    void aRegistryOfItsOwnGetsTheMetersAndTheGlobalRegistryIsUntouched() {
        SimpleMeterRegistry global = addToGlobal(); // sees whatever reaches the global registry
        Map<String, List<Double>> globalBefore = snapshot(global);
        List<MeterRegistry> globalsRegistries = List.copyOf(Metrics.globalRegistry.getRegistries());
        SimpleMeterRegistry own = new SimpleMeterRegistry();

        EngineMetrics m = into(own);
        m.connections(1);
        m.completed(OperationType.SEND, true, false, 3_000, 512);
        m.completionError("RETRY_EXC_ERR");
        m.pollBatch(2);

        assertEquals(1, own.get("rdma.operations").tags("device", "rxe0", "op", "send", "outcome", "success")
                .counter().count());
        assertEquals(512, own.get("rdma.bytes").tags("device", "rxe0", "op", "send").counter().count());
        assertEquals(1, own.get("rdma.completion.errors").tags("device", "rxe0", "status", "RETRY_EXC_ERR")
                .counter().count());
        assertEquals(1, own.get("rdma.connections").tag("device", "rxe0").gauge().value());
        assertEquals(globalBefore, snapshot(global), "nothing recorded in the global registry");
        assertEquals(globalsRegistries, List.copyOf(Metrics.globalRegistry.getRegistries()),
                "no registry added to the global one");
    }

    @Test
    void aRecorderSupplierThatReturnsNullIsNamed() {
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withMetrics(true, () -> null);
        NullPointerException e = org.junit.jupiter.api.Assertions.assertThrows(NullPointerException.class,
                () -> EngineMetrics.of(config, "rxe0", PEER));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("metrics recorder supplier"), e.getMessage());
    }
}
