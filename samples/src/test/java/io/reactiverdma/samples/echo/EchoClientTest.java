package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client's reactive ping-pong against an echo server on the real engine, in this JVM on rdma-test's
 * loopback device (the same on rxe: EchoRxeTest). The server misbehaves on cue: it corrupts a reply, drops
 * one, or goes away.
 */
class EchoClientTest {
    private static final Duration WAIT = Duration.ofSeconds(20);

    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    /** Messages the server received while one of its replies was still owed: 1 when the client waits. */
    private final AtomicInteger maxInFlight = new AtomicInteger();
    private final AtomicInteger received = new AtomicInteger();
    private volatile int corruptReply = -1;
    private volatile int corruptOffset;
    private volatile int dropReply = -1;
    private volatile int goAwayAfter = -1;

    /** The echo server, misbehaving as the fields say, and a client connection to it. */
    private RdmaConnection connect(RdmaClient client) {
        AtomicInteger replied = new AtomicInteger();
        DisposableRdmaServer server = RdmaServer.create().host(rdma.host()).port(0)
                .handle(c -> c.send(c.receive().concatMap(m -> {
                    byte[] copy = m.toByteArray();
                    m.release();
                    int i = received.getAndIncrement();
                    maxInFlight.accumulateAndGet(i + 1 - replied.get(), Math::max);
                    if (i == goAwayAfter) {
                        c.dispose();
                        return Mono.empty();
                    }
                    if (i == dropReply) {
                        replied.incrementAndGet(); // owed no more: the client moves on only after its timeout
                        return Mono.empty();
                    }
                    if (i == corruptReply) {
                        copy[corruptOffset] ^= 0x40;
                    }
                    replied.incrementAndGet();
                    return Mono.just(ByteBuffer.wrap(copy));
                })))
                .bindNow(WAIT);
        return client.host(rdma.host()).port(server.port()).connectNow(WAIT);
    }

    private RdmaConnection connect() {
        return connect(RdmaClient.create());
    }

    @Test
    void oneMessageAtATimeEveryReplyCheckedAndReleased() {
        // One receive buffer: a reply the client kept would leave the next one nowhere to land.
        RdmaConnection conn = connect(RdmaClient.create().option(RdmaOption.RECEIVE_QUEUE_DEPTH, 1));
        StepVerifier.create(EchoClient.pingPong(conn, 500, 64, WAIT))
                .assertNext(stats -> {
                    assertEquals(500, stats.count());
                    assertTrue(stats.minNs() > 0);
                })
                .expectComplete()
                .verify(WAIT);
        assertEquals(500, received.get());
        assertEquals(1, maxInFlight.get(), "ping-pong: never a second message before the reply");
    }

    @Test
    void aCorruptedReplyIsAMismatchNamingMessageAndOffset() {
        corruptReply = 7;
        corruptOffset = 3;
        RdmaConnection conn = connect(RdmaClient.create().option(RdmaOption.RECEIVE_QUEUE_DEPTH, 1));
        StepVerifier.create(EchoClient.pingPong(conn, 100, 16, WAIT))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof EchoException.Mismatch, "mismatch, got " + t);
                    EchoException.Mismatch m = (EchoException.Mismatch) t;
                    assertEquals(7, m.messageIndex());
                    assertEquals(3, m.offset());
                    assertTrue(m.getMessage().startsWith("reply 7 differs from the message sent: byte 3 is 0x"),
                            m.getMessage());
                })
                .verify(WAIT);
        // The bad reply was released too: with one receive buffer, another round trip needs it back.
        StepVerifier.create(EchoClient.pingPong(conn, 3, 16, WAIT)).expectNextCount(1).expectComplete().verify(WAIT);
    }

    @Test
    void aPeerThatGoesAwayIsAConnectionClosedException() {
        goAwayAfter = 10;
        RdmaConnection conn = connect();
        StepVerifier.create(EchoClient.pingPong(conn, 100, 64, WAIT))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof ConnectionClosedException, "closed, got " + t);
                    assertTrue(t.getMessage().contains("closed after 10 of 100 replies"), t.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void aMissingReplyTimesOut() {
        dropReply = 3;
        RdmaConnection conn = connect();
        StepVerifier.create(EchoClient.pingPong(conn, 100, 64, Duration.ofMillis(300)))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof EchoException.Timeout, "timeout, got " + t);
                    assertEquals(3, ((EchoException.Timeout) t).messageIndex());
                })
                .verify(WAIT);
    }

    @Test
    void aMessageLargerThanTheServersBuffersIsRefusedBeforeSending() {
        RdmaConnection conn = connect();
        assertEquals(4096, conn.maxMessageSize(), "the server's default receive buffers");
        StepVerifier.create(EchoClient.pingPong(conn, 10, 4097, WAIT))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof InvalidRequestException, "invalid, got " + t);
                    assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE, ((InvalidRequestException) t).reason());
                    assertTrue(t.getMessage().contains("--max-size 4097"), t.getMessage());
                })
                .verify(WAIT);
        assertEquals(0, received.get());
    }

    @Test
    void consecutiveMessagesDifferEvenAtOneByte() {
        byte[] a = new byte[1];
        byte[] b = new byte[1];
        for (int i = 0; i < 1000; i++) {
            EchoClient.fillPattern(a, i);
            EchoClient.fillPattern(b, i + 1);
            assertNotEquals(a[0], b[0], "messages " + i + " and " + (i + 1));
        }
    }
}
