package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@link ConnectionContract} on the in-JVM loopback device, which counts what the engine allocates: after
 * each test only the engine's per-device resources (at most one protection domain and one rdma_cm channel) are left,
 * and no completion queue overflowed. A port nobody listens on is always REJECTED here (no network between).
 */
@Timeout(60)
class ConnectionLoopbackTest extends ConnectionContract {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private final LoopbackStackFixture fixture = new LoopbackStackFixture(WAIT, Kind.PROTECTION_DOMAIN,
            Kind.REGISTRATION, Kind.CM_CHANNEL);
    private final LoopbackStack stack = fixture.stack();
    private final RdmaEngine engine = fixture.engine();

    @Override
    protected StackFixture stack() {
        return fixture;
    }

    @Override
    protected Set<ConnectionEvent.Type> nobodyListensReasons() {
        return Set.of(ConnectionEvent.Type.REJECTED);
    }

    /**
     * Loopback only: counting each engine's rdma_cm channel and protection domain needs the loopback's
     * resource accounting.
     */
    @Test
    void clientAndServerOnSeparateEnginesEachHaveTheirOwnChannelAndPd() {
        RdmaEngine other = new RdmaEngine(stack);
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0);
        Sinks.One<RdmaConnection> serverConnection = Sinks.one();
        DisposableRdmaServer server = other.bind(config, c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        RdmaConnection client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertEquals(2, stack.resources().count(Kind.CM_CHANNEL));
        assertEquals(2, stack.resources().count(Kind.PROTECTION_DOMAIN));
        StepVerifier.create(s.receive().take(2).map(ConnectionLoopbackTest::text))
                .then(() -> Flux.concat(client.send(text("a")), client.send(text("b"))).subscribe())
                .expectNext("a", "b").expectComplete().verify(WAIT);
        RegisteredBuffer exposed = s.memory().allocateRegistered(64, RemoteAccess.READ);
        exposed.buffer().put(3, (byte) 42);
        RegisteredBuffer local = client.memory().allocate(64);
        StepVerifier.create(client.read(local, exposed.remoteRegion())).expectComplete().verify(WAIT);
        assertEquals(42, local.buffer().get(3));
        local.release();
        exposed.release();
        client.dispose();
        client.onDispose().block(WAIT);
        server.disposeNow(WAIT);
        stack.awaitReleasedButDeviceWatches(WAIT, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL);
    }

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String text(RdmaMessage m) {
        try {
            return new String(m.toByteArray(), StandardCharsets.UTF_8);
        } finally {
            m.release();
        }
    }
}
