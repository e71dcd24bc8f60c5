package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectRequest;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackFixture;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Admission on the loopback device: the connection limit, the application's acceptor (asynchronous, timed
 * out, failing), private data both ways and its limits, and hostile private data from a raw rdma_cm peer.
 */
@Timeout(60)
class AdmissionHostTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    private Mono<RdmaConnection> connect(RdmaTransportConfig c) {
        return engine.connect(c.withPort(server.port()));
    }

    private static ConnectionRejectedException rejected(Mono<RdmaConnection> connect) {
        AtomicReference<Throwable> error = new AtomicReference<>();
        StepVerifier.create(connect).expectErrorSatisfies(error::set).verify(WAIT);
        return assertInstanceOf(ConnectionRejectedException.class, error.get());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void theConnectionBeyondTheLimitIsRejectedWithItsReason() {
        bindServer(localConfig().withOption(RdmaOption.MAX_CONNECTIONS, 2));
        RdmaConnection a = connect(localConfig()).block(WAIT);
        RdmaConnection b = connect(localConfig()).block(WAIT);
        assertNotNull(a);
        assertNotNull(b);
        ConnectionRejectedException e = rejected(connect(localConfig()));
        assertEquals(Rejection.CONNECTION_LIMIT, e.rejection());
        assertEquals(ConnectionEvent.Type.REJECTED, e.reason());
        assertEquals("the server has its maximum of 2 connections", e.serverReason());
        assertEquals(2, server.connectionCount());
        // A closed connection frees its place.
        a.dispose();
        a.onDispose().block(WAIT);
        awaitConnectionCount(1);
        client = connect(localConfig()).block(WAIT);
        assertNotNull(client);
        b.dispose();
        b.onDispose().block(WAIT);
    }

    private void awaitConnectionCount(int n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.connectionCount() != n) {
            assertTrue(System.nanoTime() < deadline, "connection count stays " + server.connectionCount());
            Thread.onSpinWait();
        }
    }

    @Test
    void theAcceptorSeesTheRequestAndPrivateDataGoesBothWays() {
        List<ConnectRequest> seen = new CopyOnWriteArrayList<>();
        bindServer(serverConfig().withAcceptor(r -> {
            seen.add(r);
            // Asynchronous: decided on another thread a little later.
            return Mono.delay(Duration.ofMillis(50)).thenReturn(Admission.accept(bytes("welcome, " + new String(
                    r.privateData(), StandardCharsets.UTF_8))));
        }));
        client = connect(clientConfig().withPrivateData(bytes("client-42"))).block(WAIT);
        assertNotNull(client);
        assertEquals("welcome, client-42", new String(client.peerPrivateData(), StandardCharsets.UTF_8));
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertArrayEquals(bytes("client-42"), s.peerPrivateData());
        assertEquals(1, seen.size());
        assertArrayEquals(bytes("client-42"), seen.get(0).privateData());
        assertEquals(client.localAddress(), seen.get(0).remoteAddress());
        assertEquals(server.port(), seen.get(0).localAddress().getPort());
        // Credits still negotiated beside the application's data.
        assertTrue(client.creditFlowControl());
        assertTrue(s.creditFlowControl());
    }

    @Test
    void privateDataOfTheLargestSizesArrivesWhole() {
        byte[] clientData = new byte[RdmaClientConfig.MAX_CONNECT_PRIVATE_DATA];
        byte[] serverData = new byte[Admission.MAX_ACCEPT_PRIVATE_DATA];
        new Random(7).nextBytes(clientData);
        new Random(8).nextBytes(serverData);
        clientData[clientData.length - 1] = 0; // trailing zeros are data too, not the CM's padding
        serverData[serverData.length - 1] = 0;
        bindServer(serverConfig().withAcceptor(r -> Mono.just(Admission.accept(serverData))));
        client = connect(clientConfig().withPrivateData(clientData)).block(WAIT);
        assertNotNull(client);
        assertArrayEquals(serverData, client.peerPrivateData());
        assertArrayEquals(clientData, serverConnection.asMono().block(WAIT).peerPrivateData());
    }

    @Test
    void privateDataThatDoesNotFitIsRefusedBeforeAnythingIsAllocated() {
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> clientConfig().withPrivateData(new byte[RdmaClientConfig.MAX_CONNECT_PRIVATE_DATA + 1]));
        assertEquals(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE, e.reason());
        assertTrue(e.getMessage().contains("at most 32"), e.getMessage());
        e = assertThrows(InvalidRequestException.class,
                () -> Admission.accept(new byte[Admission.MAX_ACCEPT_PRIVATE_DATA + 1]));
        assertEquals(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE, e.reason());
        e = assertThrows(InvalidRequestException.class, () -> Admission.reject("é".repeat(71))); // 142 bytes
        assertEquals(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE, e.reason());
        assertEquals(0, stack.liveIds().size(), "nothing was made");
    }

    @Test
    void theAcceptorRejectsWithItsReasonAndNothingIsAllocated() {
        // The server on its own device, so what the rejected request cost the server can be counted there.
        stack.close();
        stack = io.reactiverdma.reactive.impl.loopback.LoopbackStack.builder().device("client0", "127.0.0.1")
                .device("server0", "10.77.0.1").build();
        engine = new RdmaEngine(stack);
        server = engine.bind(serverConfig().withHost("10.77.0.1").withAcceptor(
                r -> Mono.just(Admission.reject("not today, " + r.remoteAddress().getPort()))),
                conn -> conn.onDispose()).block(WAIT);
        ConnectionRejectedException e = rejected(connect(localConfig().withHost("10.77.0.1")
                .withOption(RdmaOption.LOCAL_ADDRESS, "127.0.0.1")));
        assertEquals(Rejection.REFUSED, e.rejection());
        assertTrue(e.serverReason().startsWith("not today, "), e.serverReason());
        assertEquals(28, e.status(), "IB CM consumer-defined reject");
        assertEquals(0, server.connectionCount());
        var serverDevice = stack.device("server0").resources();
        for (var kind : io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind.values()) {
            if (kind != io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind.CM_ID) {
                assertEquals(0, serverDevice.count(kind), kind + " on the server's device: " + serverDevice);
            }
        }
        awaitNoPassiveIds();
    }

    private void awaitNoPassiveIds() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!stack.passiveIds().isEmpty()) {
            assertTrue(System.nanoTime() < deadline, "request ids left: " + stack.passiveIds());
            Thread.onSpinWait();
        }
    }

    @Test
    void anAcceptorThatNeverAnswersIsTimedOutAndItsRequestReleased() {
        AtomicInteger cancelled = new AtomicInteger();
        bindServer(serverConfig().withOption(RdmaOption.ACCEPT_TIMEOUT, Duration.ofMillis(200))
                .withAcceptor(r -> Mono.<Admission>never().doOnCancel(cancelled::incrementAndGet)));
        long start = System.nanoTime();
        ConnectionRejectedException e = rejected(connect(localConfig()));
        assertEquals(Rejection.ACCEPT_TIMEOUT, e.rejection());
        assertTrue(e.serverReason().contains("PT0.2S"), e.serverReason());
        assertTrue(System.nanoTime() - start >= Duration.ofMillis(200).toNanos());
        assertEquals(1, cancelled.get(), "the acceptor's Mono was cancelled");
        awaitNoPassiveIds();
    }

    @Test
    void anAcceptorThatFailsThrowsOrAnswersNothingRejectsAsServerError() {
        AtomicInteger calls = new AtomicInteger();
        bindServer(serverConfig().withAcceptor(r -> switch (calls.incrementAndGet()) {
            case 1 -> Mono.error(new IllegalStateException("acceptor broke"));
            case 2 -> Mono.empty();
            case 3 -> throw new IllegalStateException("acceptor threw");
            case 4 -> null;
            default -> Mono.just(Admission.accept());
        }));
        for (int i = 0; i < 4; i++) {
            ConnectionRejectedException e = rejected(connect(localConfig()));
            assertEquals(Rejection.SERVER_ERROR, e.rejection(), "call " + (i + 1));
        }
        client = connect(localConfig()).block(WAIT);
        assertNotNull(client, "the server serves on");
    }

    @Test
    void requestsWaitingForTheAcceptorCountTowardsTheLimit() {
        bindServer(serverConfig().withOption(RdmaOption.MAX_CONNECTIONS, 1)
                .withAcceptor(r -> Mono.delay(Duration.ofMillis(300)).thenReturn(Admission.accept())));
        Mono<RdmaConnection> first = connect(localConfig()).cache();
        first.subscribe(c -> { }, err -> { });
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (stack.passiveIds().isEmpty()) {
            assertTrue(System.nanoTime() < deadline);
            Thread.onSpinWait();
        }
        assertEquals(Rejection.CONNECTION_LIMIT, rejected(connect(localConfig())).rejection());
        client = first.block(WAIT);
        assertNotNull(client);
    }

    // ------------------------------------------------------------------------ hostile and plain peers

    /** A raw rdma_cm client on the loopback: connects with {@code privateData} as it is. */
    private CmEventInfo rawConnect(byte[] privateData) {
        CmChannel ch = stack.openCmChannel();
        CmId id = ch.createId(PortSpace.TCP);
        try {
            id.resolveAddress(null, new InetSocketAddress("127.0.0.1", server.port()), 1000);
            LoopbackFixture.next(ch, CmEventType.ADDR_RESOLVED);
            id.resolveRoute(1000);
            LoopbackFixture.next(ch, CmEventType.ROUTE_RESOLVED);
            id.connect(new ConnectSpec(1, 1, 6, 3, privateData));
            CmEventInfo e = LoopbackFixture.next(ch, 5_000_000_000L);
            assertNotNull(e, "no answer to the raw connect");
            return e;
        } finally {
            id.close();
            ch.close();
        }
    }

    /** A well-formed offer (whatever its version) whose length byte claims {@code applicationLength} bytes. */
    private static byte[] offerClaiming(int applicationLength, int total) {
        byte[] offer = new io.reactiverdma.reactive.impl.connection.Negotiation(true, 0x1000, 7, 4096).encode();
        byte[] b = Arrays.copyOf(offer, total);
        b[6] = (byte) applicationLength;
        return b;
    }

    @Test
    void hostilePrivateDataIsRejectedTypedAndTheServerServesOn() {
        List<ConnectRequest> seen = new CopyOnWriteArrayList<>();
        bindServer(serverConfig().withAcceptor(r -> {
            seen.add(r);
            return Mono.just(Admission.accept());
        }));
        // The length byte claims more application data than the 56 bytes of a request can hold.
        CmEventInfo e = rawConnect(offerClaiming(255, 24));
        assertEquals(CmEventType.REJECTED, e.type());
        ConnectionRejectedException typed = io.reactiverdma.reactive.impl.cm.RejectDataAccess.decode(e);
        assertEquals(Rejection.INVALID_REQUEST, typed.rejection());
        assertTrue(typed.serverReason().contains("malformed private data"), typed.serverReason());
        assertTrue(seen.isEmpty(), "the acceptor never saw it");
        // Random private data with the engine's magic: never a crash, each one accepted or rejected.
        Random random = new Random(13);
        for (int i = 0; i < 40; i++) {
            byte[] data = offerClaiming(random.nextInt(256), 24 + random.nextInt(33));
            for (int j = 8; j < data.length; j++) {
                if (random.nextInt(4) == 0) {
                    data[j] = (byte) random.nextInt();
                }
            }
            CmEventInfo answer = rawConnect(data);
            assertTrue(answer.type() == CmEventType.REJECTED || answer.type() == CmEventType.ESTABLISHED,
                    "answer " + answer);
        }
        awaitNoPassiveIdsOrConnections();
        client = connect(localConfig()).block(WAIT);
        assertNotNull(client, "the server serves on");
    }

    private void awaitNoPassiveIdsOrConnections() {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.connectionCount() != 0) {
            assertTrue(System.nanoTime() < deadline, server.connectionCount() + " connections left");
            Thread.onSpinWait();
        }
    }

    @Test
    void aPlainPeersPrivateDataReachesTheAcceptorAndGetsTheAcceptDataAsItIs() {
        AtomicReference<byte[]> got = new AtomicReference<>();
        bindServer(serverConfig().withAcceptor(r -> {
            got.set(r.privateData());
            return Mono.just(Admission.accept(bytes("plain-reply")));
        }));
        CmEventInfo e = rawConnect(bytes("plain-hello"));
        assertEquals(CmEventType.ESTABLISHED, e.type());
        assertArrayEquals(bytes("plain-hello"), got.get());
        assertArrayEquals(bytes("plain-reply"), Arrays.copyOf(e.privateData(), 11));
        assertEquals(0, e.privateData()[11], "nothing of the engine's negotiation for a plain peer");
    }

    @Test
    void aServersMalformedAcceptDataFailsTheConnectTyped() {
        // A raw server that answers with the engine's magic and a length byte claiming more than it sent.
        CmChannel ch = stack.openCmChannel();
        CmId listener = ch.createId(PortSpace.TCP);
        List<CmId> children = new ArrayList<>();
        try {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            listener.listen(8);
            Mono<RdmaConnection> attempt = engine.connect(localConfig().withPort(listener.localAddress().getPort()));
            AtomicReference<Throwable> error = new AtomicReference<>();
            attempt.subscribe(c -> c.dispose(), error::set);
            CmEventInfo request = LoopbackFixture.next(ch, CmEventType.CONNECT_REQUEST);
            CmId child = request.id();
            children.add(child);
            ByteBuffer b = ByteBuffer.wrap(offerClaiming(250, 24));
            child.accept(new ConnectSpec(1, 1, 6, 3, b.array()));
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (error.get() == null) {
                assertTrue(System.nanoTime() < deadline, "the connect did not fail");
                LoopbackFixture.next(ch, 10_000_000L); // drain the raw server's events
            }
            RdmaConnectException typed = assertInstanceOf(RdmaConnectException.class, error.get());
            assertEquals(ConnectionEvent.Type.CONNECT_ERROR, typed.reason());
            assertTrue(typed.getMessage().contains("accept private data is malformed"), typed.getMessage());
        } finally {
            children.forEach(CmId::close);
            listener.close();
            ch.close();
        }
    }

    @Test
    void aRejectWithoutTheEnginesFormatIsUnspecified() {
        // Nothing listens on the port: the CM's own reject (status 8), no reason.
        server = engine.bind(localConfig(), c -> c.onDispose()).block(WAIT);
        int port = server.port();
        server.disposeNow(WAIT);
        server = null;
        AtomicReference<Throwable> error = new AtomicReference<>();
        StepVerifier.create(engine.connect(localConfig().withPort(port))).expectErrorSatisfies(error::set).verify(WAIT);
        ConnectionRejectedException e = assertInstanceOf(ConnectionRejectedException.class, error.get());
        assertEquals(Rejection.UNSPECIFIED, e.rejection());
        assertNull(e.serverReason());
        assertEquals(8, e.status());
    }
}
