package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectRequest;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaResources;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * On a real device (rxe in the VM): admission (the connection limit, the acceptor, private data both ways,
 * also with rdma-core's C tools as peers), placement options rxe accepts, and device memory before any
 * connection. Graceful shutdown is in {@link ShutdownContract}.
 */
@Tag(RxeTestSupport.TAG)
class ServerAdmissionRxeTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    private final RxeResources resources = new RxeResources();
    private final PeerProcesses processes = new PeerProcesses();

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        resources.close();
        processes.close();
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    private RdmaConnection connect(RdmaClient c) {
        RdmaConnection conn = c.connectNow(WAIT);
        resources.clients.add(conn);
        return conn;
    }

    private static ConnectionRejectedException rejected(RdmaClient c) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        StepVerifier.create(c.connect()).expectErrorSatisfies(error::set).verify(WAIT);
        return assertInstanceOf(ConnectionRejectedException.class, error.get());
    }

    private static void echoOnce(RdmaConnection c) {
        StepVerifier.create(c.receive().take(1).map(m -> {
                    String s = text(m.toByteArray());
                    m.release();
                    return s;
                }))
                .then(() -> c.send(ByteBuffer.wrap(bytes("ping"))).subscribe())
                .expectNext("ping")
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void limitAcceptorAndPrivateDataBothWaysWithPlacementOptions() throws Exception {
        List<ConnectRequest> seen = new CopyOnWriteArrayList<>();
        List<RdmaConnection> serverSides = new CopyOnWriteArrayList<>();
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .option(RdmaOption.MAX_CONNECTIONS, 2)
                .option(RdmaOption.ACK_TIMEOUT, 14)
                .option(RdmaOption.COMPLETION_VECTOR, 5)
                .accept(r -> {
                    seen.add(r);
                    String data = text(r.privateData());
                    return Mono.delay(Duration.ofMillis(20)).thenReturn(data.equals("deny")
                            ? Admission.reject("denied: " + data) : Admission.accept(bytes("ok:" + data)));
                })
                .handle(c -> {
                    serverSides.add(c);
                    return c.send(c.receive().map(m -> {
                        ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                        m.release();
                        return copy;
                    }));
                })
                .bindNow(WAIT);
        resources.servers.add(server);
        RdmaClient base = RdmaClient.create().host(host()).port(server.port());

        // rxe takes the type of service, the ACK timeout exponent and a completion vector beyond its one.
        RdmaConnection first = connect(base.privateData(bytes("alpha")).localAddress(host())
                .option(RdmaOption.TYPE_OF_SERVICE, 32).option(RdmaOption.ACK_TIMEOUT, 14)
                .option(RdmaOption.RETRY_COUNT, 5).option(RdmaOption.COMPLETION_VECTOR, 3));
        assertEquals("ok:alpha", text(first.peerPrivateData()));
        assertEquals(InetAddress.getByName(host()), first.localAddress().getAddress());
        assertTrue(first.creditFlowControl(), "negotiation still rides beside the application's data");
        echoOnce(first);
        assertArrayEquals(bytes("alpha"), serverSides.get(0).peerPrivateData());

        ConnectionRejectedException refused = rejected(base.privateData(bytes("deny")));
        assertEquals(Rejection.REFUSED, refused.rejection());
        assertEquals("denied: deny", refused.serverReason());

        RdmaConnection second = connect(base.privateData(bytes("beta")));
        assertEquals("ok:beta", text(second.peerPrivateData()));
        ConnectionRejectedException full = rejected(base.privateData(bytes("gamma")));
        assertEquals(Rejection.CONNECTION_LIMIT, full.rejection());
        assertEquals("the server has its maximum of 2 connections", full.serverReason());
        assertEquals(3, seen.size(), "the request beyond the limit never reached the acceptor");
        assertEquals(2, server.connectionCount());
        echoOnce(second);
    }

    /**
     * rdma-core's rdma_client as the peer: it sends no private data and reads none (no example in
     * librdmacm/examples carries private data on an RC connection rxe supports: rdma_xserver's is XRC).
     * Rejected, it fails; accepted with private data it ignores, it is served.
     */
    @Test
    void rdmaClientIsRejectedWithItsReasonThenAccepted() throws Exception {
        List<ConnectRequest> seen = new CopyOnWriteArrayList<>();
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .accept(r -> {
                    seen.add(r);
                    return Mono.just(seen.size() == 1 ? Admission.reject("first one out")
                            : Admission.accept(bytes("to a plain peer")));
                })
                .handle(c -> c.send(c.receive().map(m -> {
                    ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                    m.release();
                    return copy;
                })))
                .bindNow(WAIT);
        resources.servers.add(server);
        Process rejectedClient = processes.start("rdma_client", "-s", host(), "-p", Integer.toString(server.port()));
        String out = PeerProcesses.finish(rejectedClient, "rdma_client");
        assertNotEquals(0, rejectedClient.exitValue(), "rdma_client should have been rejected:\n" + out);
        Process accepted = processes.start("rdma_client", "-s", host(), "-p", Integer.toString(server.port()));
        out = PeerProcesses.finish(accepted, "rdma_client");
        assertEquals(0, accepted.exitValue(), "rdma_client failed:\n" + out);
        assertEquals(2, seen.size());
        assertNotNull(seen.get(0).remoteAddress());
    }

    /** Our client's private data does not disturb rdma_server, which sends none back. */
    @Test
    void privateDataToRdmaServerIsHarmless() throws Exception {
        int port = 20000 + (int) ((ProcessHandle.current().pid() + 7) % 20000);
        Process server = processes.start("rdma_server", "-s", host(), "-p", Integer.toString(port));
        RdmaClient client = RdmaClient.create().host(host()).port(port).privateData(bytes("hello rdma_server"));
        RdmaConnection c = PeerProcesses.connectWhenListening(client, server, WAIT);
        resources.clients.add(c);
        assertEquals(0, c.peerPrivateData().length, "rdma_server accepts without private data");
        StepVerifier.create(c.receive())
                .then(() -> c.send(ByteBuffer.wrap(bytes("sixteen bytes!!!"))).subscribe())
                .assertNext(m -> {
                    assertEquals(16, m.length());
                    m.release();
                })
                .expectComplete()
                .verify(WAIT);
        String out = PeerProcesses.finish(server, "rdma_server");
        assertEquals(0, server.exitValue(), "rdma_server failed:\n" + out);
    }

    @Test
    void deviceMemoryBeforeAnyConnectionIsTheMemoryItsConnectionsUse() {
        RdmaMemory byName = RdmaResources.memory(RxeTestSupport.deviceName()).block(WAIT);
        RdmaMemory byAddress = RdmaResources.memory(host()).block(WAIT);
        assertNotNull(byName);
        assertSame(byName, byAddress, "one device, one memory, found by name and by address");
        RegisteredBuffer table = byName.allocateRegistered(4096, RemoteAccess.READ);
        try {
            table.buffer().put(0, bytes("registered at start"));
            List<RdmaConnection> serverSides = new CopyOnWriteArrayList<>();
            DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                    .handle(c -> {
                        serverSides.add(c);
                        return c.onDispose();
                    })
                    .bindNow(WAIT);
            resources.servers.add(server);
            RdmaConnection c = connect(RdmaClient.create().host(host()).port(server.port()));
            assertSame(byName, serverSides.get(0).memory(), "the connection's memory is the device's");
            RegisteredBuffer local = c.memory().allocate(19);
            c.read(local, table.remoteRegion().slice(0, 19)).block(WAIT);
            byte[] got = new byte[19];
            local.buffer().get(0, got);
            local.release();
            assertEquals("registered at start", text(got));
        } finally {
            table.release();
        }
    }
}
