package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ShutdownContract} on the loopback device, which checks after an engine's shutdown that no resource
 * of any kind is left; and what only the loopback can inject (defects 9 and 10 of the engine-core issue):
 * a connect attempt held up at ROUTE_RESOLVED when the engine shuts down, port events, a fatal device.
 */
@Timeout(90)
class ShutdownLoopbackTest extends ShutdownContract {
    static final Duration WAIT = Duration.ofSeconds(10);

    private final LoopbackStackFixture fixture = new LoopbackStackFixture(WAIT);
    private final LoopbackStack stack = fixture.stack();
    private final RdmaEngine serverEngine = fixture.newEngine();
    private final RdmaEngine clientEngine = fixture.newEngine();

    @Override
    protected StackFixture stack() {
        return fixture;
    }

    /** The loopback's own tests' engines (JUnit runs this before the contract closes the stack). */
    @AfterEach
    void shutDownOwnEngines() {
        clientEngine.shutdown().block(WAIT);
        serverEngine.shutdown().block(WAIT);
    }

    private static RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
    }

    private DisposableRdmaServer echoServer() {
        DisposableRdmaServer s = serverEngine.bind(config(), c -> c.send(c.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        }))).block(WAIT);
        assertNotNull(s);
        return s;
    }

    private RdmaConnection connectAndEcho(DisposableRdmaServer server) {
        RdmaConnection c = clientEngine.connect(config().withPort(server.port())).block(WAIT);
        assertNotNull(c);
        StepVerifier.create(c.send(ByteBuffer.wrap(new byte[] {1, 2, 3})).then(c.receive().next()
                        .doOnNext(RdmaMessage::release).map(RdmaMessage::length)))
                .expectNext(3).expectComplete().verify(WAIT);
        return c;
    }

    /** A connect attempt under way when the engine shuts down fails typed instead of hanging. */
    @Test
    void shutdownFailsAConnectAttemptUnderWay() {
        DisposableRdmaServer server = echoServer();
        stack.faults().delayEvents(CmEventType.ROUTE_RESOLVED, Duration.ofSeconds(5), 1);
        Mono<RdmaConnection> attempt = clientEngine.connect(config().withPort(server.port())).cache();
        attempt.subscribe(x -> { }, e -> { });
        StepVerifier.create(Mono.delay(Duration.ofMillis(100)).then(clientEngine.shutdown())).expectComplete().verify(WAIT);
        StepVerifier.create(attempt).expectError(RdmaConnectException.class).verify(WAIT);
    }

    /** Defect 9: port events reached nobody. */
    @Test
    void portEventsArePublished() {
        DisposableRdmaServer server = echoServer();
        StepVerifier.create(clientEngine.deviceEvents().take(2))
                .then(() -> {
                    // the client engine opens the device when it first connects through it
                    connectAndEcho(server).dispose();
                    stack.faults().raisePortEvent(stack.device("loopback0"), AsyncEventType.PORT_ERR, 1);
                    stack.faults().raisePortEvent(stack.device("loopback0"), AsyncEventType.GID_CHANGE, 1);
                })
                .expectNext(new DeviceEvent("loopback0", DeviceEvent.Type.PORT_ERROR, 1))
                .expectNext(new DeviceEvent("loopback0", DeviceEvent.Type.GID_CHANGE, 1))
                .expectComplete()
                .verify(WAIT);
    }

    /** Defect 9: a fatal device fails its connections and gives back what the engine held of it. */
    @Test
    void aFatalDeviceFailsItsConnectionsAndReleasesItsResources() {
        DisposableRdmaServer server = echoServer();
        RdmaConnection c = connectAndEcho(server);
        StepVerifier.create(clientEngine.deviceEvents().filter(e -> e.type() == DeviceEvent.Type.DEVICE_FATAL).next())
                .then(() -> stack.faults().raiseDeviceFatal(stack.device("loopback0")))
                .expectNext(new DeviceEvent("loopback0", DeviceEvent.Type.DEVICE_FATAL, -1))
                .expectComplete()
                .verify(WAIT);
        StepVerifier.create(c.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(c.send(ByteBuffer.allocate(1))).expectError(ConnectionClosedException.class).verify(WAIT);
        StepVerifier.create(server.onDispose().then(Mono.just(1))).expectSubscription().thenCancel().verify(WAIT);
        // Both engines (client and server in this JVM) retired the device: no PD is left.
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (stack.resources().count(Kind.PROTECTION_DOMAIN) > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(0, stack.resources().count(Kind.PROTECTION_DOMAIN), stack.resources().toString());
    }
}
