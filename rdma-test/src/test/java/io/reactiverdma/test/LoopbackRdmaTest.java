package io.reactiverdma.test;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a user's test gets from rdma-test: with one dependency and the one line below, the public API
 * ({@link RdmaServer}, {@link RdmaClient}) runs the real engine on the in-JVM loopback device, and faults can
 * be injected.
 */
@Timeout(60)
class LoopbackRdmaTest {
    private static final Duration WAIT = Duration.ofSeconds(15);

    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    /** The server's side of the last connection it accepted. */
    private final Sinks.One<RdmaConnection> accepted = Sinks.one();

    private DisposableRdmaServer echoServer() {
        return RdmaServer.create().host(rdma.host()).port(0)
                .handle(c -> {
                    accepted.tryEmitValue(c);
                    return c.send(c.receive(m -> ByteBuffer.wrap(m.toByteArray())));
                })
                .bindNow(WAIT);
    }

    private static RdmaConnection connect(DisposableRdmaServer server) {
        return RdmaClient.create().host(rdma.host()).port(server.port()).connectNow(WAIT);
    }

    private static Mono<String> exchange(RdmaConnection client, String text) {
        Mono<String> reply = client.receive(m -> new String(m.toByteArray(), StandardCharsets.UTF_8)).next();
        return client.send(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8))).then(reply);
    }

    @Test
    void anEchoServerAndClientRunOnTheRealEngineInThisJvm() {
        DisposableRdmaServer server = echoServer();
        RdmaConnection client = connect(server);
        StepVerifier.create(exchange(client, "hello, RDMA")).expectNext("hello, RDMA").expectComplete().verify(WAIT);
        assertTrue(client.creditFlowControl(), "the engine's own handshake ran: credits were negotiated");
        client.dispose();
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }

    @Test
    void whatATestLeavesOpenIsClosedAfterIt() {
        // Opened here and not closed: the extension's close() after this test ends them, and the next test
        // gets a fresh device (nothing of this one is visible there).
        DisposableRdmaServer server = echoServer();
        RdmaConnection client = connect(server);
        StepVerifier.create(exchange(client, "left open")).expectNext("left open").expectComplete().verify(WAIT);
        rdma.close();
        assertTrue(client.isDisposed(), "closing the device closed the connection");
        StepVerifier.create(server.onDispose()).expectComplete().verify(WAIT);
        rdma.start(); // the extension closes it again after the test
    }

    @Test
    void aKilledHostEndsItsPeersSendsWithRetryExceeded() {
        DisposableRdmaServer server = echoServer();
        RdmaConnection client = connect(server);
        StepVerifier.create(exchange(client, "before")).expectNext("before").expectComplete().verify(WAIT);
        RdmaConnection serverSide = accepted.asMono().block(WAIT);
        rdma.faults().killHost(serverSide);
        StepVerifier.create(client.send(ByteBuffer.allocate(8)))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof RdmaCompletionException, e.toString());
                    assertEquals("RETRY_EXC_ERR", ((RdmaCompletionException) e).statusName());
                })
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }

    @Test
    void aRefusedSendPostFailsTheSendTypedAndClosesTheConnection() {
        DisposableRdmaServer server = echoServer();
        RdmaConnection client = connect(server);
        rdma.faults().refuseNextSendPost();
        StepVerifier.create(client.send(ByteBuffer.allocate(8)))
                .expectErrorSatisfies(e -> assertTrue(e instanceof RdmaException, e.toString()))
                .verify(WAIT);
        StepVerifier.create(client.onDispose()).expectComplete().verify(WAIT);
    }

    @Test
    void aConnectDelayedBeyondItsTimeoutFailsTyped() {
        DisposableRdmaServer server = echoServer();
        rdma.faults().delayNextConnects(Duration.ofSeconds(3), 1);
        StepVerifier.create(RdmaClient.create().host(rdma.host()).port(server.port())
                        .option(RdmaOption.CONNECT_TIMEOUT, Duration.ofMillis(300)).connect())
                .expectError(RdmaConnectException.class)
                .verify(WAIT);
        StepVerifier.create(exchange(connect(server), "the next one")).expectNext("the next one").expectComplete()
                .verify(WAIT);
    }

    @Test
    void onlyOneLoopbackIsStartedAtATimeAndBadFaultArgumentsAreRefused() {
        LoopbackRdma second = LoopbackRdma.create();
        IllegalStateException e = assertThrows(IllegalStateException.class, second::start);
        assertTrue(e.getMessage().contains("another LoopbackRdma"), e.getMessage());
        second.close(); // not started: nothing to do, and the started one stays
        assertThrows(IllegalStateException.class, () -> second.faults());
        assertThrows(IllegalArgumentException.class, () -> rdma.faults().dropNextDatagrams(0));
        assertThrows(IllegalArgumentException.class, () -> rdma.faults().delayNextConnects(Duration.ofSeconds(-1), 1));
        assertThrows(NullPointerException.class, () -> rdma.faults().killHost(null));
        DisposableRdmaServer server = echoServer();
        assertFalse(server.isDisposed(), "the started loopback still serves");
    }
}
