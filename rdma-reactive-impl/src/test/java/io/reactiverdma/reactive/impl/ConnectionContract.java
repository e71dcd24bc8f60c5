package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.device.BufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a connection does on every stack: two-sided and one-sided operations, bad input refused before
 * anything is posted, remote errors typed, close, and connect failures. {@link ConnectionLoopbackTest} runs it
 * on the in-JVM loopback device in the host build (and checks after each test that only the engine's
 * per-device resources are left); {@link ConnectionRxeTest} runs it on rxe in the VM.
 *
 * <p>Each test makes one server and one client on {@link #engine()} at {@link #host()}; both are closed
 * after it.
 */
abstract class ConnectionContract {
    private DisposableRdmaServer server;
    private RdmaConnection client;
    private final Sinks.One<RdmaConnection> serverConnection = Sinks.one();

    /** The stack under test (its engine, device address, step time, resource check and close). */
    protected abstract StackFixture stack();

    private RdmaEngine engine() {
        return stack().engine();
    }

    private String host() {
        return stack().host();
    }

    private Duration waitTime() {
        return stack().waitTime();
    }

    /** The reasons a connect to a port nobody listens on may fail with on this stack. */
    protected abstract Set<ConnectionEvent.Type> nobodyListensReasons();

    @AfterEach
    void closeEverything() {
        try {
            closeClientAndServer();
        } finally {
            stack().close();
        }
    }

    private void closeClientAndServer() {
        if (client != null) {
            client.dispose();
            client.onDispose().block(waitTime());
        }
        if (server != null) {
            server.disposeNow(waitTime());
        }
    }

    /** Closes the client and the server, then checks the stack's resources ({@link StackFixture#assertConnectionResourcesReleased}). */
    private void closeAndAssertReleased() {
        closeClientAndServer();
        client = null;
        server = null;
        stack().assertConnectionResourcesReleased();
    }

    private RdmaTransportConfig config(boolean credits) {
        return RdmaTransportConfig.defaults().withHost(host()).withPort(0)
                .withOption(RdmaOption.CREDIT_FLOW_CONTROL, credits);
    }

    /** A server whose handler keeps each connection open until it is disposed, and a client connected to it. */
    private RdmaConnection connect(boolean credits) {
        server = engine().bind(config(credits), c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(waitTime());
        assertNotNull(server);
        client = engine().connect(config(credits).withPort(server.port())).block(waitTime());
        assertNotNull(client);
        RdmaConnection s = serverConnection.asMono().block(waitTime());
        assertNotNull(s);
        return s;
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
        RdmaConnection s = connect(true);
        assertTrue(client.creditFlowControl(), "both sides are this framework: credits agreed");
        assertTrue(s.creditFlowControl());
        assertEquals(4096, client.maxMessageSize(), "the server announced its receive buffer size");

        StepVerifier.create(s.receive().take(3).map(ConnectionContract::text))
                .then(() -> Flux.concat(client.send(text("one")), client.send(text("two")),
                        client.sendWithImmediate(text("three"), 0xCAFE)).subscribe())
                .expectNext("one", "two", "three")
                .expectComplete()
                .verify(waitTime());

        StepVerifier.create(client.receive().take(1))
                .then(() -> s.sendWithImmediate(text("back"), 0x1234_5678).subscribe())
                .assertNext(m -> {
                    assertTrue(m.hasImmediate());
                    assertEquals(0x1234_5678, m.immediate());
                    assertEquals("back", text(m));
                })
                .expectComplete()
                .verify(waitTime());

        StepVerifier.create(client.events().map(ConnectionEvent::type).take(3))
                .expectNext(ConnectionEvent.Type.ADDRESS_RESOLVED, ConnectionEvent.Type.ROUTE_RESOLVED,
                        ConnectionEvent.Type.ESTABLISHED)
                .expectComplete()
                .verify(waitTime());
        closeAndAssertReleased();
    }

    /**
     * One subscriber at a time: a second concurrent {@code receive()} fails typed (ALREADY_SUBSCRIBED), and
     * the first keeps receiving.
     */
    @Test
    void aSecondConcurrentReceiveSubscriberFailsWithAlreadySubscribed() {
        RdmaConnection s = connect(true);
        StepVerifier.create(s.receive().take(1).map(ConnectionContract::text))
                .then(() -> StepVerifier.create(s.receive(m -> m.length()))
                        .expectErrorSatisfies(e -> {
                            assertEquals(InvalidRequestException.class, e.getClass(), e.toString());
                            assertEquals(InvalidRequestException.Reason.ALREADY_SUBSCRIBED,
                                    ((InvalidRequestException) e).reason(), e.getMessage());
                            assertTrue(e.getMessage().contains("already has a subscriber"), e.getMessage());
                        })
                        .verify(waitTime()))
                .then(() -> client.send(text("still received")).subscribe())
                .expectNext("still received")
                .expectComplete()
                .verify(waitTime());
        closeAndAssertReleased();
    }

    /** 500 messages of two sizes, well beyond the receive depth (64): credits or receives posted ahead pace them. */
    private void manyMessagesArriveWholeAndInOrder(boolean credits) {
        RdmaConnection s = connect(credits);
        assertEquals(credits, client.creditFlowControl());
        int n = 500;
        byte[] big = new byte[3000];
        StepVerifier.create(s.receive().take(n).map(m -> {
            byte[] b = m.toByteArray();
            m.release();
            return b;
        }).index().filter(t -> {
            byte[] b = t.getT2();
            int i = t.getT1().intValue();
            return b.length == (i % 7 == 0 ? big.length : 4) && (b.length == 4
                    ? ByteBuffer.wrap(b).getInt() == i : b[b.length - 1] == (byte) i);
        }).count())
                .then(() -> Flux.range(0, n).concatMap(i -> {
                    if (i % 7 == 0) {
                        byte[] b = big.clone();
                        b[b.length - 1] = (byte) (int) i;
                        return client.send(ByteBuffer.wrap(b));
                    }
                    return client.send(ByteBuffer.allocate(4).putInt(0, i));
                }, 32).subscribe())
                .expectNext((long) n)
                .expectComplete()
                .verify(waitTime());
        closeAndAssertReleased();
    }

    @Test
    void manyMessagesArriveWholeAndInOrderWithCreditFlowControl() {
        manyMessagesArriveWholeAndInOrder(true);
    }

    @Test
    void manyMessagesArriveWholeAndInOrderWithoutCreditFlowControl() {
        manyMessagesArriveWholeAndInOrder(false);
    }

    @Test
    void oneSidedWriteReadAndAtomicsOnServerMemory() {
        RdmaConnection s = connect(true);
        RegisteredBuffer exposed = s.memory().allocateRegistered(8192, RemoteAccess.READ, RemoteAccess.WRITE,
                RemoteAccess.ATOMIC);
        RemoteRegion region = exposed.remoteRegion();
        assertEquals(8192, region.length());
        RemoteRegion handedOver = RemoteRegion.fromBytes(region.toBytes());

        RegisteredBuffer local = client.memory().allocate(1000);
        ByteBuffer view = local.buffer();
        for (int i = 0; i < 1000; i++) {
            view.put(i, (byte) (i * 7));
        }
        StepVerifier.create(client.write(local, handedOver.slice(100, 1000))).expectComplete().verify(waitTime());
        ByteBuffer serverView = exposed.buffer();
        for (int i = 0; i < 1000; i++) {
            assertEquals((byte) (i * 7), serverView.get(100 + i), "byte " + i + " written");
        }

        serverView.putLong(4096, 0x0102_0304_0506_0708L);
        RegisteredBuffer target = client.memory().allocate(8);
        StepVerifier.create(client.read(target, handedOver.slice(4096, 8))).expectComplete().verify(waitTime());
        assertEquals(0x0102_0304_0506_0708L, target.buffer().getLong(0));

        ByteBuffer words = exposed.buffer().order(ByteOrder.nativeOrder()); // the atomics' byte order
        words.putLong(2048, 42L);
        RemoteRegion word = handedOver.slice(2048, 8);
        StepVerifier.create(client.compareAndSwap(word, 42L, 100L)).expectNext(42L).expectComplete().verify(waitTime());
        StepVerifier.create(client.compareAndSwap(word, 42L, 7L)).expectNext(100L).expectComplete().verify(waitTime());
        assertEquals(100L, words.getLong(2048), "a failed compare leaves the word");
        StepVerifier.create(client.fetchAndAdd(word, 0x1_0000_0005L)).expectNext(100L).expectComplete()
                .verify(waitTime());
        assertEquals(100L + 0x1_0000_0005L, words.getLong(2048));

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
                .verify(waitTime());
        assertEquals(99, serverView.get(0));
        local.release();
        target.release();
        exposed.release();
        closeAndAssertReleased();
    }

    @Test
    void badInputIsRefusedTypedBeforeAnythingIsPosted() {
        RdmaConnection s = connect(true);
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
        StepVerifier.create(s.receive().take(1).map(ConnectionContract::text))
                .then(() -> client.send(text("still fine")).subscribe())
                .expectNext("still fine").expectComplete().verify(waitTime());
        local.release();
        exposed.release();
        closeAndAssertReleased();
    }

    private void expectInvalid(Mono<?> m, InvalidRequestException.Reason reason) {
        StepVerifier.create(m)
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof InvalidRequestException, "InvalidRequestException, got " + t);
                    assertEquals(reason, ((InvalidRequestException) t).reason(), t.getMessage());
                })
                .verify(waitTime());
    }

    @Test
    void aWriteToReadOnlyMemoryFailsTypedAsRemoteAccessErrorAndClosesTheConnection() {
        RdmaConnection s = connect(true);
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
                .verify(waitTime());
        // The QP is in error: the connection closes itself, and what comes after is refused.
        client.onDispose().block(waitTime());
        StepVerifier.create(client.send(text("too late")))
                .expectError(ConnectionClosedException.class)
                .verify(waitTime());
        local.release();
        readOnly.release();
        closeAndAssertReleased();
    }

    /**
     * Disposing the client fails its sends still waiting for credits with ConnectionClosedException, completes
     * its receive, emits CLOSED, runs both sides' onDispose callbacks once, refuses later sends, and gives the
     * waiting sends' copies back to the pool.
     */
    @Test
    void disposeFailsWaitingSendsCompletesReceiveAndClosesBothSidesOnce() throws InterruptedException {
        RdmaConnection s = connect(true);
        BufferPool pool = (BufferPool) client.memory();
        long before = pool.pooledBytesInUse();
        AtomicInteger disposed = new AtomicInteger();
        CountDownLatch bothDisposed = new CountDownLatch(2);
        client.onDispose().subscribe(null, null, () -> {
            disposed.incrementAndGet();
            bothDisposed.countDown();
        });
        s.onDispose().subscribe(null, null, () -> {
            disposed.incrementAndGet();
            bothDisposed.countDown();
        });
        // The server never asks for messages: with credits the client's sends wait for credits.
        List<Mono<Void>> sends = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            Mono<Void> m = client.send(text("waiting " + i)).cache();
            m.subscribe(null, t -> { });
            sends.add(m);
        }
        StepVerifier.create(client.receive())
                .then(client::dispose)
                .expectComplete()
                .verify(waitTime());
        for (Mono<Void> m : sends) {
            StepVerifier.create(m).expectError(ConnectionClosedException.class).verify(waitTime());
        }
        StepVerifier.create(client.onDispose()).expectComplete().verify(waitTime());
        StepVerifier.create(client.events().filter(e -> e.type() == ConnectionEvent.Type.CLOSED))
                .expectNextCount(1).expectComplete().verify(waitTime());
        // The peer sees the disconnect and closes too.
        StepVerifier.create(s.onDispose()).expectComplete().verify(waitTime());
        // A subscriber that comes after the completion may see it before the completing thread has called the
        // earlier subscribers: wait for them, then check each was called once.
        assertTrue(bothDisposed.await(waitTime().toMillis(), TimeUnit.MILLISECONDS), "both onDispose callbacks ran");
        assertEquals(2, disposed.get());
        assertTrue(client.isDisposed());
        StepVerifier.create(client.send(text("late"))).expectError(ConnectionClosedException.class).verify(waitTime());
        assertFalse(pool.pooledBytesInUse() > before, "copies of the refused sends went back to the pool: "
                + pool.pooledBytesInUse() + " > " + before);
        closeAndAssertReleased();
    }

    @Test
    void aServerHandlerThatThrowsRejectsTheClient() {
        server = engine().bind(config(true), c -> {
            throw new IllegalStateException("this handler refuses everyone");
        }).block(waitTime());
        assertNotNull(server);
        StepVerifier.create(engine().connect(config(true).withPort(server.port())))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaConnectException, e.toString());
                    assertEquals(ConnectionEvent.Type.REJECTED, ((RdmaConnectException) e).reason(), e.toString());
                })
                .verify(waitTime());
        closeAndAssertReleased();
    }

    @Test
    void connectingToAPortNobodyListensOnIsATypedConnectError() {
        StepVerifier.create(engine().connect(config(true).withPort(7)
                        .withOption(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(20))))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof RdmaConnectException, "RdmaConnectException, got " + t);
                    assertTrue(nobodyListensReasons().contains(((RdmaConnectException) t).reason()), t.toString());
                })
                .verify(waitTime());
        closeAndAssertReleased();
    }

    @Test
    void anUnknownHostIsATypedAddressError() {
        StepVerifier.create(engine().connect(config(true).withHost("no-such-host.invalid").withPort(7471)))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaConnectException, e.toString());
                    assertEquals(ConnectionEvent.Type.ADDRESS_ERROR, ((RdmaConnectException) e).reason());
                })
                .verify(waitTime());
        closeAndAssertReleased();
    }
}
