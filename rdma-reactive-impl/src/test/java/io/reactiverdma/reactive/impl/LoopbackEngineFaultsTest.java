package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.support.CmEvents;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The real engine on the loopback device under injected faults: what a connection does when things break. */
@Timeout(60)
class LoopbackEngineFaultsTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(15);

    private static RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
    }

    private void bind(RdmaTransportConfig config) {
        server = engine.bind(config, c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
    }

    private void connect(RdmaTransportConfig config) {
        bind(config);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
    }

    private RdmaConnection serverSide() {
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        return s;
    }

    /**
     * The server side consumes everything (the engine posts receives only for demand, and credits follow
     * them) and one message has made the round, so the client holds credits before a fault is injected.
     */
    private RdmaConnection consumingServerSide() {
        RdmaConnection s = serverSide();
        Sinks.One<Boolean> first = Sinks.one();
        s.receive().subscribe(m -> {
            m.release();
            first.tryEmitValue(true);
        }, e -> { });
        StepVerifier.create(client.send(bytes(1))).expectComplete().verify(WAIT);
        assertEquals(Boolean.TRUE, first.asMono().block(WAIT));
        return s;
    }

    private void assertOnlyDeviceResourcesLeft() {
        if (client != null) {
            client.dispose();
            client.onDispose().block(WAIT);
            client = null;
        }
        server.disposeNow(WAIT);
        server = null;
        stack.awaitReleasedButDeviceWatches(WAIT, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL);
    }

    private static ByteBuffer bytes(int n) {
        return ByteBuffer.wrap(new byte[n]);
    }

    @Test
    void anInjectedCompletionErrorFailsTheSendAndClosesBothSides() {
        connect(config());
        RdmaConnection s = consumingServerSide();
        stack.faults().failNextCompletion(null, WrOpcode.SEND, WcStatus.REM_OP_ERR);
        StepVerifier.create(client.send(bytes(10)))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaCompletionException, e.toString());
                    assertEquals(WcStatus.REM_OP_ERR.value(), ((RdmaCompletionException) e).status());
                })
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(s.onDispose()).expectComplete().verify(WAIT);
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void aDeadPeerHostMakesSendsFailWithRetryExceeded() {
        connect(config());
        consumingServerSide();
        List<LoopbackCmId> passive = stack.passiveIds();
        assertEquals(1, passive.size());
        stack.faults().dropHost(passive.get(0));
        StepVerifier.create(client.send(bytes(10)))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaCompletionException, e.toString());
                    assertEquals(WcStatus.RETRY_EXC_ERR.value(), ((RdmaCompletionException) e).status());
                })
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }

    @Test
    void withoutCreditsAReceiverThatKeepsItsMessagesCausesRnrRetryExceeded() {
        RdmaTransportConfig plain = config().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 4);
        connect(plain);
        serverSide(); // nobody consumes: its 4 receive buffers are never reposted
        StepVerifier.create(Flux.range(0, 5).concatMap(i -> client.send(bytes(8))).then())
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaCompletionException, e.toString());
                    assertEquals(WcStatus.RNR_RETRY_EXC_ERR.value(), ((RdmaCompletionException) e).status());
                })
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }

    @Test
    void withCreditsTheSenderWaitsInsteadOfOverrunningTheReceiver() {
        RdmaTransportConfig credits = config().withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 4);
        connect(credits);
        RdmaConnection s = serverSide();
        Sinks.Empty<Void> done = Sinks.empty();
        Flux.range(0, 12).concatMap(i -> client.send(bytes(8))).subscribe(null, done::tryEmitError, done::tryEmitEmpty);
        StepVerifier.create(done.asMono()).expectSubscription().expectNoEvent(Duration.ofMillis(300)).thenCancel()
                .verify(WAIT);
        StepVerifier.create(s.receive().take(12).doOnNext(m -> m.release()).count())
                .expectNext(12L).expectComplete().verify(WAIT);
        StepVerifier.create(done.asMono()).expectComplete().verify(WAIT);
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void connectFailuresInjectedAtEachStepAreReportedWithTheirType() {
        bind(config());
        for (CmEventType t : new CmEventType[] {CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR,
                CmEventType.UNREACHABLE, CmEventType.CONNECT_ERROR, CmEventType.REJECTED}) {
            stack.faults().failNextConnect(t, -110);
            StepVerifier.create(engine.connect(config().withPort(server.port())))
                    .expectErrorSatisfies(e -> {
                        assertTrue(e instanceof RdmaConnectException, e.toString());
                        assertEquals(CmEvents.map(t), ((RdmaConnectException) e).reason(), e.toString());
                    })
                    .verify(WAIT);
        }
        assertEquals(0, server.connectionCount());
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void anEstablishedArrivingAfterTheConnectTimeoutLeavesNothingBehind() {
        bind(config());
        // Far beyond the timeout: a loaded machine may run the 200 ms timer hundreds of milliseconds late.
        stack.faults().delayEvents(CmEventType.ESTABLISHED, Duration.ofSeconds(3), 2);
        StepVerifier.create(engine.connect(config().withPort(server.port())
                        .withOption(RdmaOption.CONNECT_TIMEOUT, Duration.ofMillis(200))))
                .expectErrorSatisfies(e -> assertTrue(e instanceof RdmaConnectException, e.toString()))
                .verify(WAIT);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (stack.liveIdsButDeviceWatches().size() > 1 && System.nanoTime() < deadline) {
            sleep(10);
        }
        assertEquals(1, stack.liveIdsButDeviceWatches().size(), "only the listener (and the device watch): "
                + stack.resources());
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void aHungDeviceMakesCloseWaitForTheDrainTimeoutThenFailTheOperation() {
        connect(config());
        consumingServerSide();
        stack.faults().hang(stack.device("loopback0"));
        Sinks.One<Throwable> sendResult = Sinks.one();
        client.send(bytes(10)).subscribe(null, sendResult::tryEmitValue, () -> sendResult.tryEmitValue(new AssertionError("completed")));
        sleep(50);
        long start = System.nanoTime();
        client.dispose();
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs >= 4_000, "waited for the drain timeout (5 s), took " + tookMs + " ms");
        Throwable t = sendResult.asMono().block(WAIT);
        assertNotNull(t);
        assertTrue(!(t instanceof AssertionError), "the send must fail, not complete");
        stack.faults().resume(stack.device("loopback0"));
        client = null;
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void deviceRemovalClosesConnectionsAndTheServer() {
        connect(config());
        RdmaConnection s = serverSide();
        stack.faults().removeDevice(stack.device("loopback0"));
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(s.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(server.onDispose()).expectComplete().verify(WAIT);
        assertTrue(client.events().filter(e -> e.type() == ConnectionEvent.Type.DEVICE_REMOVAL).hasElements()
                .block(WAIT));
        assertOnlyDeviceResourcesLeft();
    }

    /**
     * An engine with nothing open on a device (its connection and server closed, the engine still running)
     * keeps the device's protection domain, pool and context; when the device is removed, rdma_cm tells only
     * the ids on it. Before, the engine had none left there, heard nothing and held on (on rxe the removal then
     * waited for the process to end: DeviceRemovalRxeTest shows it on the real stack). Now it keeps one id
     * bound to the device for as long as it holds resources there, so it is told and retires the device.
     */
    @Test
    void aDeviceWithNothingOpenOnItIsRetiredWhenRemoved() {
        connect(config());
        List<DeviceEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.Disposable watching = engine.deviceEvents().subscribe(events::add);
        try {
            client.dispose();
            client.onDispose().block(WAIT);
            client = null;
            server.disposeNow(WAIT);
            server = null;
            assertEquals(1, stack.resources().count(Kind.PROTECTION_DOMAIN), "the engine keeps the device's resources");
            stack.faults().removeDevice(stack.device("loopback0"));
            stack.resources().awaitReleased(WAIT, Kind.CM_CHANNEL);
            assertTrue(events.stream().anyMatch(e -> e.type() == DeviceEvent.Type.DEVICE_REMOVED
                    && e.device().equals("loopback0")), "the removal was published: " + events);
        } finally {
            watching.dispose();
        }
        // the next connection through the device makes new resources, and a new watch
        Sinks.One<Boolean> received = Sinks.one();
        server = engine.bind(config(), c -> c.receive().doOnNext(m -> {
            m.release();
            received.tryEmitValue(true);
        }).then()).block(WAIT);
        client = engine.connect(config().withPort(server.port())).block(WAIT);
        StepVerifier.create(client.send(bytes(1))).expectComplete().verify(WAIT);
        assertEquals(Boolean.TRUE, received.asMono().block(WAIT));
        assertEquals(1, stack.deviceWatches().size(), "watched again: " + stack.liveIds());
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void perConnectionCqsWithBackoffPollersMoveMessages() {
        RdmaTransportConfig c = config().withOption(RdmaOption.COMPLETION_QUEUE_MODE, CompletionQueueMode.PER_CONNECTION)
                .withOption(RdmaOption.IDLE_STRATEGY, PollerIdleStrategy.backoff());
        connect(c);
        RdmaConnection s = serverSide();
        StepVerifier.create(s.receive().take(20).doOnNext(m -> m.release()).count())
                .then(() -> Flux.range(0, 20).concatMap(i -> client.send(bytes(100))).subscribe())
                .expectNext(20L).expectComplete().verify(WAIT);
        assertEquals(2, stack.resources().count(Kind.COMPLETION_QUEUE), "one per connection");
        assertOnlyDeviceResourcesLeft();
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
