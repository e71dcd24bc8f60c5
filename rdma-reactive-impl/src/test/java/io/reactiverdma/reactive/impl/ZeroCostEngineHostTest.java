package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real engine on the zero-cost loopback device ({@link LoopbackStack#zeroCost()}), as the engine
 * benchmarks run it: one engine is both server and client, with shared completion queues, so both
 * connection ends are on one poller thread (the device refuses a post from any other thread, so a test that
 * passes here also shows that the engine posted only from its poller). Loopback-only: the device exists to
 * measure the engine and has no rxe counterpart.
 */
@Timeout(120)
class ZeroCostEngineHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private LoopbackStack stack;
    private RdmaEngine engine;
    private DisposableRdmaServer server;
    private RdmaConnection client;

    @AfterEach
    void close() {
        try {
            if (client != null) {
                client.dispose();
                client.onDispose().block(WAIT);
            }
            if (server != null) {
                server.disposeNow(WAIT);
            }
        } finally {
            stack.close();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"busySpin", "eventDriven"})
    void sendsWritesAndReadsMoveTheBytesAndCompleteOnOnePoller(String idle) {
        stack = LoopbackStack.zeroCost();
        engine = new RdmaEngine(stack);
        PollerIdleStrategy strategy = idle.equals("busySpin") ? PollerIdleStrategy.busySpin()
                : PollerIdleStrategy.eventDriven();
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.IDLE_STRATEGY, strategy);
        Sinks.Many<byte[]> received = Sinks.many().replay().all();
        Sinks.One<RdmaConnection> accepted = Sinks.one();
        server = engine.bind(config, c -> {
            c.receive(m -> {
                byte[] b = new byte[m.length()];
                m.data().get(b);
                return b;
            }).subscribe(received::tryEmitNext, e -> { });
            accepted.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        RdmaConnection serverSide = accepted.asMono().block(WAIT);
        assertNotNull(client);
        assertNotNull(serverSide);

        RegisteredBuffer message = client.memory().allocate(64);
        for (int i = 0; i < 64; i++) {
            message.buffer().put(i, (byte) i);
        }
        StepVerifier.create(client.send(message)).expectComplete().verify(WAIT);
        ByteBuffer[] stream = new ByteBuffer[100];
        for (int i = 0; i < stream.length; i++) {
            stream[i] = ByteBuffer.wrap(new byte[] {(byte) i, (byte) (i >> 8), 7});
        }
        StepVerifier.create(client.send(Flux.fromArray(stream))).expectComplete().verify(WAIT);
        StepVerifier.create(received.asFlux().take(101))
                .assertNext(b -> {
                    assertEquals(64, b.length);
                    assertEquals(63, b[63]);
                })
                .thenConsumeWhile(b -> true)
                .expectComplete()
                .verify(WAIT);
        byte[] last = received.asFlux().take(101).last().block(WAIT);
        assertArrayEquals(new byte[] {99, 0, 7}, last, "the streamed messages arrive in order, byte for byte");

        RegisteredBuffer exposed = serverSide.memory().allocateRegistered(64, RemoteAccess.WRITE, RemoteAccess.READ);
        RemoteRegion region = RemoteRegion.fromBytes(exposed.remoteRegion().toBytes());
        StepVerifier.create(client.write(message, region)).expectComplete().verify(WAIT);
        assertEquals(17, exposed.buffer().get(17), "the WRITE moved the bytes");
        exposed.buffer().put(5, (byte) -5);
        RegisteredBuffer back = client.memory().allocate(64);
        StepVerifier.create(client.read(back, region)).expectComplete().verify(WAIT);
        assertEquals(-5, back.buffer().get(5), "the READ moved the bytes");

        LoopbackQueuePair qp = clientQueuePair();
        assertEquals(0, qp.outstandingSends(), "nothing waits for a wire thread");
        assertTrue(qp.sendRequestsPosted() >= 103, "the client posted its requests: " + qp.sendRequestsPosted());
        message.release();
        back.release();
        exposed.release();
    }

    private LoopbackQueuePair clientQueuePair() {
        for (LoopbackCmId id : stack.liveIds()) {
            if (!id.isConnectRequest() && id.queuePair() != null) {
                return id.queuePair();
            }
        }
        throw new AssertionError("no client QP among " + stack.liveIds());
    }
}
