package io.reactiverdma.reactive.impl;

import io.micrometer.context.ContextRegistry;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On rxe: a connect and its accept as Micrometer observations (what a tracer sees), the meters in a registry
 * of the application's own tagged by device and peer with the global registry untouched, and the subscriber's
 * thread locals restored on the engine's poller thread by Reactor's automatic context propagation.
 */
@Tag(RxeTestSupport.TAG)
class ObservationsRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String TRACE_KEY = "rdma.test.trace";
    private static final ThreadLocal<String> TRACE = new ThreadLocal<>();

    private final RxeResources resources = new RxeResources();

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        resources.close();
    }

    @Test
    void connectAndAcceptAreObservedAndMetersGoOnlyToTheGivenRegistry() {
        RecordingObservationHandler handler = new RecordingObservationHandler();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(handler);
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        List<MeterRegistry> globalsRegistries = List.copyOf(Metrics.globalRegistry.getRegistries());
        int globalMeters = Metrics.globalRegistry.getMeters().size();
        Sinks.One<RdmaConnection> accepted = Sinks.one();

        DisposableRdmaServer server = RdmaServer.create().host(RxeTestSupport.deviceAddress()).port(0)
                .observer(MicrometerRdmaObserver.of(observations))
                .metrics(true, () -> MicrometerRdmaRecorder.of(own, 8))
                .handle(c -> {
                    accepted.tryEmitValue(c);
                    return c.onDispose();
                }).bindNow(WAIT);
        resources.servers.add(server);
        Observation parent = Observation.start("http.server.requests", observations);
        RdmaConnection client = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(server.port())
                .observer(MicrometerRdmaObserver.of(observations))
                .metrics(true, () -> MicrometerRdmaRecorder.of(own, 8))
                .connect().contextWrite(Context.of(MicrometerRdmaObserver.CONTEXT_KEY, parent)).block(WAIT);
        resources.clients.add(client);
        parent.stop();
        RdmaConnection serverSide = accepted.asMono().block(WAIT);

        StepVerifier.create(serverSide.receive().take(1).doOnNext(RdmaMessage::release).then())
                .then(() -> client.send(ByteBuffer.allocate(100)).subscribe())
                .expectComplete()
                .verify(WAIT);

        Observation.Context connect = handler.stoppedNamed(MicrometerRdmaObserver.CONNECT);
        assertSame(parent, connect.getParentObservation(), "the connect is a child of the request");
        assertEquals("established", connect.getLowCardinalityKeyValue("rdma.outcome").getValue());
        assertEquals(String.valueOf(server.port()), connect.getHighCardinalityKeyValue("network.peer.port").getValue());
        Observation.Context accept = waitForStopped(handler, MicrometerRdmaObserver.ACCEPT);
        assertEquals("server", accept.getLowCardinalityKeyValue("rdma.side").getValue());
        assertEquals("established", accept.getLowCardinalityKeyValue("rdma.outcome").getValue());

        String device = own.get("rdma.connections").gauge().getId().getTag("device");
        assertTrue(device != null && !device.isBlank(), "device tag: " + device);
        assertEquals(1, own.get("rdma.operations").tags("op", "send", "outcome", "success").counter().count());
        assertEquals(100, own.get("rdma.bytes").tags("op", "recv").counter().count());
        Set<String> remotes = new TreeSet<>();
        for (Meter m : own.find("rdma.connections").gauges()) {
            remotes.add(m.getId().getTag("remote"));
        }
        assertEquals(Set.of(RxeTestSupport.deviceAddress()), remotes, "both ends' peer is the device address");
        assertEquals(2, own.find("rdma.connections").gauges().stream().mapToDouble(g -> g.value()).sum(),
                "client and server connection");
        assertEquals(globalsRegistries, List.copyOf(Metrics.globalRegistry.getRegistries()),
                "no registry added to the global one");
        assertEquals(globalMeters, Metrics.globalRegistry.getMeters().size(), "no meter in the global registry");
    }

    @Test
    void theSubscribersThreadLocalsAreRestoredOnThePollerThread() {
        ContextRegistry.getInstance().registerThreadLocalAccessor(TRACE_KEY, TRACE::get, TRACE::set, TRACE::remove);
        Hooks.enableAutomaticContextPropagation();
        try {
            Sinks.One<RdmaConnection> accepted = Sinks.one();
            DisposableRdmaServer server = RdmaServer.create().host(RxeTestSupport.deviceAddress()).port(0)
                    .handle(c -> {
                        accepted.tryEmitValue(c);
                        return c.onDispose();
                    }).bindNow(WAIT);
            resources.servers.add(server);
            RdmaConnection client = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(server.port())
                    .connectNow(WAIT);
            resources.clients.add(client);
            accepted.asMono().block(WAIT).receive().subscribe(RdmaMessage::release);

            AtomicReference<String> seen = new AtomicReference<>();
            StepVerifier.create(client.send(ByteBuffer.allocate(16))
                            .doOnSuccess(v -> seen.set(TRACE.get() + " on " + Thread.currentThread().getName()))
                            .contextWrite(Context.of(TRACE_KEY, "trace-42")))
                    .expectComplete()
                    .verify(WAIT);
            assertTrue(seen.get().startsWith("trace-42 on rdma-poller-"), "the send's completion ran on the "
                    + "poller with the subscriber's thread local: " + seen.get());
            assertEquals(null, TRACE.get(), "and the test thread's is untouched");
        } finally {
            Hooks.disableAutomaticContextPropagation();
            ContextRegistry.getInstance().removeThreadLocalAccessor(TRACE_KEY);
        }
    }

    /** The accept's observation ends on the rdma_cm thread, possibly just after the client saw ESTABLISHED. */
    private static Observation.Context waitForStopped(RecordingObservationHandler handler, String name) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (handler.stopped.stream().anyMatch(c -> name.equals(c.getName()))) {
                return handler.stoppedNamed(name);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        return handler.stoppedNamed(name);
    }
}
