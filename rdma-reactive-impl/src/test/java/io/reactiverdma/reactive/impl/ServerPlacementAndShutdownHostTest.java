package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue;
import io.reactiverdma.reactive.impl.loopback.LoopbackDevice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Placement (ACK timeout, type of service, local address, completion vector), device memory before any
 * connection, and graceful server shutdown (what only the loopback can show: requests waiting for the
 * acceptor, counted by its passive ids), on the loopback device. The graceful shutdown every stack must do is
 * {@link ShutdownContract}.
 */
@Timeout(60)
class ServerPlacementAndShutdownHostTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    private LoopbackCmId activeId() {
        return stack.liveIds().stream().filter(i -> !i.isConnectRequest() && i.peer() != null).findFirst()
                .orElseThrow();
    }

    @Test
    void ackTimeoutAndTypeOfServiceReachRdmaCmOnlyWhenSet() {
        bindServer(localConfig().withOption(RdmaOption.ACK_TIMEOUT, 14));
        client = engine.connect(localConfig().withPort(server.port()).withOption(RdmaOption.ACK_TIMEOUT, 16)
                .withOption(RdmaOption.TYPE_OF_SERVICE, 96)).block(WAIT);
        assertNotNull(client);
        LoopbackCmId clientId = activeId();
        assertEquals(16, clientId.ackTimeout());
        assertEquals(96, clientId.typeOfService());
        assertEquals(14, stack.passiveIds().get(0).ackTimeout(), "the server's own QP");
        assertEquals(-1, stack.passiveIds().get(0).typeOfService(), "a server answers in the request's class");
        assertEquals(6, clientId.connectSpec().retryCount());
        client.dispose();
        client.onDispose().block(WAIT);

        client = engine.connect(localConfig().withPort(server.port()).withOption(RdmaOption.RETRY_COUNT, 2)).block(WAIT);
        LoopbackCmId plain = activeId();
        assertEquals(-1, plain.ackTimeout(), "unset: rdma_cm's default");
        assertEquals(-1, plain.typeOfService(), "unset: rdma_cm's default");
        assertEquals(2, plain.connectSpec().retryCount());
    }

    @Test
    void aClientConnectsFromTheLocalAddressItNames() throws Exception {
        bindServer(localConfig());
        client = engine.connect(localConfig().withPort(server.port()).withOption(RdmaOption.LOCAL_ADDRESS, "10.77.0.1"))
                .block(WAIT);
        assertNotNull(client);
        assertEquals(InetAddress.getByName("10.77.0.1"), client.localAddress().getAddress());
        assertEquals(InetAddress.getByName("10.77.0.1"),
                serverConnection.asMono().block(WAIT).remoteAddress().getAddress());
    }

    @Test
    void aLocalAddressOnNoDeviceFailsTheConnectTyped() {
        bindServer(localConfig());
        StepVerifier.create(engine.connect(localConfig().withPort(server.port())
                        .withOption(RdmaOption.LOCAL_ADDRESS, "10.99.0.1")))
                .expectError(RdmaException.class)
                .verify(WAIT);
    }

    @Test
    void pollersUseTheCompletionVectorAskedForWrappedToTheDevicesCount() {
        bindServer(localConfig().withOption(RdmaOption.COMPLETION_VECTOR, 6)); // 4 vectors: 6 -> 2
        client = engine.connect(localConfig().withPort(server.port()).withOption(RdmaOption.COMPLETION_VECTOR, 1))
                .block(WAIT);
        assertNotNull(client);
        LoopbackDevice device = stack.device("loopback0");
        java.util.Set<Integer> vectors = new java.util.TreeSet<>();
        for (LoopbackCompletionQueue cq : device.completionQueues()) {
            vectors.add(device.vectorOf(cq));
        }
        assertEquals(java.util.Set.of(1, 2), vectors, "server on 2, client on 1: two CQs, never shared");
    }

    // ------------------------------------------------------------------------------- device memory

    @Test
    void deviceMemoryBeforeAnyConnectionIsTheMemoryItsConnectionsUse() {
        RdmaMemory byName = engine.memory("loopback0").block(WAIT);
        RdmaMemory byAddress = engine.memory("10.77.0.1").block(WAIT);
        assertNotNull(byName);
        assertSame(byName, byAddress, "one device, one memory");
        assertEquals(0, stack.liveIds().size(), "no rdma_cm id is left behind");
        // Registered at start, read by a client later through its connection.
        RegisteredBuffer table = byName.allocateRegistered(64, RemoteAccess.READ);
        table.buffer().put(0, "exposed at start".getBytes(StandardCharsets.UTF_8));
        bindServer(localConfig());
        client = engine.connect(localConfig().withPort(server.port())).block(WAIT);
        assertNotNull(client);
        assertSame(byName, serverConnection.asMono().block(WAIT).memory());
        RegisteredBuffer local = client.memory().allocate(16);
        client.read(local, table.remoteRegion().slice(0, 16)).block(WAIT);
        byte[] got = new byte[16];
        local.buffer().get(0, got);
        assertEquals("exposed at start", new String(got, StandardCharsets.UTF_8));
        local.release();
        table.release();
    }

    @Test
    void deviceMemoryForAnUnknownNameOrAddressFailsTyped() {
        StepVerifier.create(engine.memory("mlx5_9")).expectError(RdmaException.class).verify(WAIT);
        StepVerifier.create(engine.memory("10.99.0.1")).expectError(RdmaException.class).verify(WAIT);
        assertEquals(0, stack.liveIds().size());
    }

    // ------------------------------------------------------------------------------------ shutdown

    private static ByteBuffer text(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void requestsWaitingForTheAcceptorAreRejectedAsShuttingDown() {
        bindServer(serverConfig().withAcceptor(r -> Mono.never()));
        Mono<RdmaConnection> attempt = engine.connect(localConfig().withPort(server.port())).cache();
        attempt.subscribe(c -> { }, e -> { });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (stack.passiveIds().isEmpty()) {
            assertTrue(System.nanoTime() < deadline);
            Thread.onSpinWait();
        }
        server.disposeGracefully(Duration.ofSeconds(5)).block(WAIT);
        AtomicReference<Throwable> error = new AtomicReference<>();
        StepVerifier.create(attempt).expectErrorSatisfies(error::set).verify(WAIT);
        assertEquals(Rejection.SHUTTING_DOWN, assertInstanceOf(ConnectionRejectedException.class, error.get())
                .rejection());
        assertTrue(stack.passiveIds().isEmpty());
        server = null;
    }

    @Test
    void acceptDataStillWorksAfterAnotherServerShutDown() {
        // Two servers on one engine: shutting one down leaves the other admitting.
        bindServer(serverConfig().withAcceptor(r -> Mono.just(Admission.accept(new byte[] {1, 2, 3}))));
        var other = engine.bind(localConfig(), c -> c.onDispose()).block(WAIT);
        other.disposeGracefully(Duration.ofSeconds(1)).block(WAIT);
        client = engine.connect(localConfig().withPort(server.port())).block(WAIT);
        assertEquals(3, client.peerPrivateData().length);
    }
}
