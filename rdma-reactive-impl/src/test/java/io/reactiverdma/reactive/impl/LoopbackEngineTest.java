package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real engine end to end on the in-JVM loopback device: a server and a client on one engine (one
 * rdma_cm channel, one device), every operation of the reactive API, then a leak check.
 */
@Timeout(60)
class LoopbackEngineTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    private RdmaTransportConfig config(boolean credits) {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.CREDIT_FLOW_CONTROL, credits);
    }

    private void connect(boolean credits) {
        server = engine.bind(config(credits), c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        client = engine.connect(config(credits).withPort(server.port())).block(WAIT);
        assertNotNull(client);
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

    /** After everything is closed only the engine's per-device resources stay (no engine shutdown yet). */
    private void assertOnlyDeviceResourcesLeft() {
        client.dispose();
        client.onDispose().block(WAIT);
        server.disposeNow(WAIT);
        client = null;
        server = null;
        stack.resources().awaitReleased(WAIT, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL);
        assertEquals(1, stack.resources().count(Kind.PROTECTION_DOMAIN), "the engine's one PD per device");
        assertEquals(1, stack.resources().count(Kind.CM_CHANNEL), "the engine's one rdma_cm channel");
        assertEquals(0, stack.cqOverflows());
    }

    @Test
    void sendAndReceiveBothWaysWithCredits() {
        connect(true);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertTrue(client.creditFlowControl());
        assertTrue(s.creditFlowControl());
        assertEquals(4096, client.maxMessageSize());

        StepVerifier.create(s.receive().take(3).map(LoopbackEngineTest::text))
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
        assertOnlyDeviceResourcesLeft();
    }

    private void manyMessages(boolean credits) {
        connect(credits);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertEquals(credits, client.creditFlowControl());
        int n = 500; // well beyond the receive depth (64): credits (or RNR retries) must pace the sender
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
                .verify(WAIT);
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void manyMessagesWithCreditFlowControl() {
        manyMessages(true);
    }

    @Test
    void manyMessagesWithoutCreditFlowControl() {
        manyMessages(false);
    }

    @Test
    void oneSidedWriteReadAndAtomicsOnServerMemory() {
        connect(true);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        RegisteredBuffer exposed = s.memory().allocateRegistered(8192, RemoteAccess.READ, RemoteAccess.WRITE,
                RemoteAccess.ATOMIC);
        RemoteRegion region = RemoteRegion.fromBytes(exposed.remoteRegion().toBytes());
        RegisteredBuffer local = client.memory().allocate(1000);
        ByteBuffer view = local.buffer();
        for (int i = 0; i < 1000; i++) {
            view.put(i, (byte) (i * 7));
        }
        StepVerifier.create(client.write(local, region.slice(100, 1000))).expectComplete().verify(WAIT);
        ByteBuffer serverView = exposed.buffer();
        for (int i = 0; i < 1000; i++) {
            assertEquals((byte) (i * 7), serverView.get(100 + i), "byte " + i + " written");
        }
        serverView.putLong(4096, 0x0102_0304_0506_0708L);
        RegisteredBuffer target = client.memory().allocate(8);
        StepVerifier.create(client.read(target, region.slice(4096, 8))).expectComplete().verify(WAIT);
        assertEquals(0x0102_0304_0506_0708L, target.buffer().getLong(0));

        ByteBuffer words = exposed.buffer().order(ByteOrder.nativeOrder());
        words.putLong(2048, 42L);
        RemoteRegion word = region.slice(2048, 8);
        StepVerifier.create(client.compareAndSwap(word, 42L, 100L)).expectNext(42L).expectComplete().verify(WAIT);
        StepVerifier.create(client.compareAndSwap(word, 42L, 7L)).expectNext(100L).expectComplete().verify(WAIT);
        assertEquals(100L, words.getLong(2048), "a failed compare leaves the word");
        StepVerifier.create(client.fetchAndAdd(word, 0x1_0000_0005L)).expectNext(100L).expectComplete().verify(WAIT);
        assertEquals(100L + 0x1_0000_0005L, words.getLong(2048));

        view.put(0, (byte) 99);
        StepVerifier.create(s.receive().take(1))
                .then(() -> client.writeWithImmediate(local.slice(0, 1), region.slice(0, 1), 77).subscribe())
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
        exposed.release();
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void disposeCompletesBothSidesAndRunsOnDispose() throws InterruptedException {
        connect(true);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
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
        StepVerifier.create(s.receive())
                .then(client::dispose)
                .expectComplete()
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
        StepVerifier.create(s.onDispose()).expectComplete().verify(WAIT);
        // A subscriber that comes after the completion may see it before the completing thread has called the
        // earlier subscribers: wait for them, then check each was called once.
        assertTrue(bothDisposed.await(WAIT.toMillis(), TimeUnit.MILLISECONDS), "both onDispose callbacks ran");
        assertEquals(2, disposed.get());
        assertTrue(client.isDisposed());
        StepVerifier.create(client.send(text("late"))).expectError().verify(WAIT);
        assertOnlyDeviceResourcesLeft();
    }

    @Test
    void clientAndServerOnSeparateEnginesEachWithItsOwnChannelAndPd() {
        RdmaEngine other = new RdmaEngine(stack);
        server = other.bind(config(true), c -> {
            serverConnection.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        client = engine.connect(config(true).withPort(server.port())).block(WAIT);
        assertNotNull(client);
        RdmaConnection s = serverConnection.asMono().block(WAIT);
        assertNotNull(s);
        assertEquals(2, stack.resources().count(Kind.CM_CHANNEL));
        assertEquals(2, stack.resources().count(Kind.PROTECTION_DOMAIN));
        StepVerifier.create(s.receive().take(2).map(LoopbackEngineTest::text))
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
        client = null;
        server = null;
        stack.resources().awaitReleased(WAIT, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION, Kind.CM_CHANNEL);
    }

    @Test
    void connectingWhereNobodyListensIsRejected() {
        StepVerifier.create(engine.connect(config(true).withPort(1)))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaConnectException, e.toString());
                    assertEquals(ConnectionEvent.Type.REJECTED, ((RdmaConnectException) e).reason());
                })
                .verify(WAIT);
        // The engine set up its device resources (PD, pool slab, control words) at ROUTE_RESOLVED; they stay.
        stack.resources().awaitReleased(WAIT, Kind.CM_CHANNEL, Kind.PROTECTION_DOMAIN, Kind.REGISTRATION);
        assertEquals(1, stack.resources().count(Kind.CM_CHANNEL));
    }
}
