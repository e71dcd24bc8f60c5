package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.device.BufferPool;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every operation of the reactive API end to end through the JNA layer on a real device (rxe in the VM):
 * a server and a client in this JVM, on the device's address.
 */
@Tag(RxeTestSupport.TAG)
class ReactiveOperationsRxeTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    private DisposableRdmaServer server;
    private RdmaConnection client;
    private final AtomicReference<RdmaConnection> serverSide = new AtomicReference<>();
    private final Sinks.One<RdmaConnection> serverConnection = Sinks.one();

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @AfterEach
    void close() {
        if (client != null) {
            client.dispose();
            client.onDispose().block(WAIT);
        }
        if (server != null) {
            server.disposeNow(WAIT);
        }
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    /** A server whose handler keeps each connection open until it is disposed, and an echo client. */
    private void connect(RdmaServer base, RdmaClient clientBase) {
        server = base.host(host()).port(0).handle(c -> {
            serverSide.set(c);
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).bindNow(WAIT);
        client = clientBase.host(host()).port(server.port()).connectNow(WAIT);
    }

    private void connect() {
        connect(RdmaServer.create(), RdmaClient.create());
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

    @Test
    void sendAndReceiveBothWaysWithCreditsNegotiated() {
        connect();
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertTrue(client.creditFlowControl(), "both sides are this framework: credits agreed");
        assertTrue(s.creditFlowControl());
        assertEquals(4096, client.maxMessageSize(), "the server announced its receive buffer size");

        StepVerifier.create(s.receive().take(3).map(ReactiveOperationsRxeTest::text))
                .then(() -> Flux.concat(client.send(text("one")), client.send(text("two")),
                        client.sendWithImmediate(text("three"), 0xCAFE)).subscribe())
                .expectNext("one", "two", "three")
                .expectComplete()
                .verify(WAIT);

        StepVerifier.create(client.receive().take(1))
                .then(() -> s.sendWithImmediate(text("back"), 0x1234_5678).subscribe())
                .assertNext(m -> {
                    assertTrue(m.hasImmediate());
                    assertEquals(0x1234_5678, m.immediate());
                    assertEquals("back", text(m));
                })
                .expectComplete()
                .verify(WAIT);

        StepVerifier.create(client.events().map(ConnectionEvent::type).take(3))
                .expectNext(ConnectionEvent.Type.ADDRESS_RESOLVED, ConnectionEvent.Type.ROUTE_RESOLVED,
                        ConnectionEvent.Type.ESTABLISHED)
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void oneSidedWriteReadAndAtomicsOnServerMemory() {
        connect();
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        RegisteredBuffer exposed = s.memory().allocateRegistered(8192, RemoteAccess.READ, RemoteAccess.WRITE,
                RemoteAccess.ATOMIC);
        try {
            RemoteRegion region = exposed.remoteRegion();
            assertEquals(8192, region.length());
            RemoteRegion handedOver = RemoteRegion.fromBytes(region.toBytes());

            RegisteredBuffer local = client.memory().allocate(1000);
            ByteBuffer view = local.buffer();
            for (int i = 0; i < 1000; i++) {
                view.put(i, (byte) (i * 7));
            }
            StepVerifier.create(client.write(local, handedOver.slice(100, 1000))).expectComplete().verify(WAIT);
            ByteBuffer serverView = exposed.buffer();
            ByteBuffer serverWords = exposed.buffer().order(java.nio.ByteOrder.nativeOrder()); // atomics' order
            for (int i = 0; i < 1000; i++) {
                assertEquals((byte) (i * 7), serverView.get(100 + i), "byte " + i + " written");
            }

            serverView.putLong(4096, 0x0102_0304_0506_0708L);
            RegisteredBuffer target = client.memory().allocate(8);
            StepVerifier.create(client.read(target, handedOver.slice(4096, 8))).expectComplete().verify(WAIT);
            assertEquals(0x0102_0304_0506_0708L, target.buffer().getLong(0));

            serverWords.putLong(2048, 42L);
            RemoteRegion word = handedOver.slice(2048, 8);
            StepVerifier.create(client.compareAndSwap(word, 42L, 100L)).expectNext(42L).expectComplete().verify(WAIT);
            StepVerifier.create(client.compareAndSwap(word, 42L, 7L)).expectNext(100L).expectComplete().verify(WAIT);
            assertEquals(100L, serverWords.getLong(2048), "a failed compare leaves the word");
            StepVerifier.create(client.fetchAndAdd(word, 0x1_0000_0005L)).expectNext(100L).expectComplete().verify(WAIT);
            assertEquals(100L + 0x1_0000_0005L, serverWords.getLong(2048));

            // WRITE with immediate: the data lands in the region, and the server receives a 0-byte message.
            view.put(0, (byte) 99);
            StepVerifier.create(s.receive().take(1))
                    .then(() -> client.writeWithImmediate(local.slice(0, 1), handedOver.slice(0, 1), 77).subscribe())
                    .assertNext(m -> {
                        assertEquals(0, m.length());
                        assertTrue(m.hasImmediate());
                        assertEquals(77, m.immediate());
                        m.release();
                    })
                    .expectComplete()
                    .verify(WAIT);
            assertEquals(99, serverView.get(0));
            local.release();
            target.release();
        } finally {
            exposed.release();
        }
    }

    @Test
    void badInputIsRefusedBeforeAnythingIsPosted() {
        connect();
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        RegisteredBuffer exposed = s.memory().allocateRegistered(64, RemoteAccess.ATOMIC, RemoteAccess.READ);
        RemoteRegion region = exposed.remoteRegion();
        RegisteredBuffer local = client.memory().allocate(128);
        expectInvalid(client.send(ByteBuffer.allocate(client.maxMessageSize() + 1)),
                InvalidRequestException.Reason.MESSAGE_TOO_LARGE);
        expectInvalid(client.read(local, region), InvalidRequestException.Reason.OUTSIDE_REGION);
        expectInvalid(client.compareAndSwap(region.slice(4, 8), 0, 1), InvalidRequestException.Reason.MISALIGNED_ATOMIC);
        expectInvalid(client.fetchAndAdd(region.slice(0, 16), 1), InvalidRequestException.Reason.WRONG_ATOMIC_SIZE);
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> client.memory().allocate(16).remoteRegion());
        assertEquals(InvalidRequestException.Reason.ACCESS_NOT_GRANTED, e.reason());
        RegisteredBuffer released = client.memory().allocate(8);
        released.release();
        expectInvalid(client.send(released), InvalidRequestException.Reason.BUFFER_RELEASED);
        // Nothing was posted: the connection still works.
        StepVerifier.create(s.receive().take(1).map(ReactiveOperationsRxeTest::text))
                .then(() -> client.send(text("still fine")).subscribe())
                .expectNext("still fine").expectComplete().verify(WAIT);
        local.release();
        exposed.release();
    }

    private static void expectInvalid(Mono<?> m, InvalidRequestException.Reason reason) {
        StepVerifier.create(m)
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof InvalidRequestException, "InvalidRequestException, got " + t);
                    assertEquals(reason, ((InvalidRequestException) t).reason(), t.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void remoteAccessIsLeastPrivilegeAFailedCompletionIsTypedAndClosesTheConnection() {
        connect();
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        RegisteredBuffer readOnly = s.memory().allocateRegistered(64, RemoteAccess.READ);
        RegisteredBuffer local = client.memory().allocate(8);
        // Writing memory exposed for READ only: the responder refuses, the requester sees REM_ACCESS_ERR.
        StepVerifier.create(client.write(local, readOnly.remoteRegion()))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof RdmaCompletionException, "completion error, got " + t);
                    RdmaCompletionException c = (RdmaCompletionException) t;
                    assertEquals(OperationType.WRITE, c.operation());
                    assertEquals("REM_ACCESS_ERR", c.statusName());
                })
                .verify(WAIT);
        // The QP is in error: the connection closes itself, and what comes after is refused.
        client.onDispose().block(WAIT);
        StepVerifier.create(client.send(text("too late")))
                .expectError(ConnectionClosedException.class)
                .verify(WAIT);
        readOnly.release();
    }

    @Test
    void closingFailsWaitingOperationsCompletesReceiveAndReleasesEverything() {
        connect();
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        BufferPool pool = (BufferPool) client.memory();
        long before = pool.pooledBytesInUse();
        // The server never asks for messages: with credits the client's sends wait for credits.
        List<Mono<Void>> sends = new java.util.ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Mono<Void> m = client.send(text("waiting " + i)).cache();
            m.subscribe(null, t -> { });
            sends.add(m);
        }
        Flux<RdmaMessage> clientReceive = client.receive();
        StepVerifier.create(clientReceive)
                .then(client::dispose)
                .expectComplete()
                .verify(WAIT);
        for (Mono<Void> m : sends) {
            StepVerifier.create(m).expectError(ConnectionClosedException.class).verify(WAIT);
        }
        client.onDispose().block(WAIT);
        StepVerifier.create(client.events().filter(e -> e.type() == ConnectionEvent.Type.CLOSED))
                .expectNextCount(1).expectComplete().verify(WAIT);
        // The peer sees the disconnect and closes too.
        s.onDispose().block(WAIT);
        assertFalse(pool.pooledBytesInUse() > before, "copies of the refused sends went back to the pool: "
                + pool.pooledBytesInUse() + " > " + before);
    }

    @Test
    void connectingToAPortNobodyListensOnIsATypedConnectError() {
        RdmaClient c = RdmaClient.create().host(host()).port(7).option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(20));
        StepVerifier.create(c.connect())
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof RdmaConnectException, "RdmaConnectException, got " + t);
                    assertTrue(List.of(ConnectionEvent.Type.REJECTED, ConnectionEvent.Type.UNREACHABLE,
                            ConnectionEvent.Type.CONNECT_ERROR).contains(((RdmaConnectException) t).reason()), t.toString());
                })
                .verify(WAIT);
    }
}
