package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client's reactive ping-pong against an in-memory echoing peer (the real device: EchoRxeTest). */
class EchoClientTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private final FakeEchoConnection conn = new FakeEchoConnection(4096);

    @AfterEach
    void close() {
        conn.dispose();
    }

    @Test
    void oneMessageAtATimeEveryReplyCheckedAndReleased() {
        StepVerifier.create(EchoClient.pingPong(conn, 500, 64, WAIT))
                .assertNext(stats -> {
                    assertEquals(500, stats.count());
                    assertTrue(stats.minNs() > 0);
                })
                .expectComplete()
                .verify(WAIT);
        assertEquals(500, conn.sent.get());
        assertEquals(1, conn.maxInFlight.get(), "ping-pong: never a second message before the reply");
        assertEquals(500, conn.released.get(), "every reply released");
    }

    @Test
    void aCorruptedReplyIsAMismatchNamingMessageAndOffset() {
        conn.corruptReply = 7;
        conn.corruptOffset = 3;
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
        assertEquals(8, conn.released.get(), "the bad reply was released too");
    }

    @Test
    void aPeerThatGoesAwayIsAConnectionClosedException() {
        conn.goAwayAfter = 10;
        StepVerifier.create(EchoClient.pingPong(conn, 100, 64, WAIT))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof ConnectionClosedException, "closed, got " + t);
                    assertTrue(t.getMessage().contains("closed after 10 of 100 replies"), t.getMessage());
                })
                .verify(WAIT);
    }

    @Test
    void aMissingReplyTimesOut() {
        conn.dropReply = 3;
        StepVerifier.create(EchoClient.pingPong(conn, 100, 64, Duration.ofMillis(300)))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof EchoException.Timeout, "timeout, got " + t);
                    assertEquals(3, ((EchoException.Timeout) t).messageIndex());
                })
                .verify(WAIT);
    }

    @Test
    void aMessageLargerThanTheServersBuffersIsRefusedBeforeSending() {
        StepVerifier.create(EchoClient.pingPong(conn, 10, 4097, WAIT))
                .expectErrorSatisfies(t -> {
                    assertTrue(t instanceof InvalidRequestException, "invalid, got " + t);
                    assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE, ((InvalidRequestException) t).reason());
                    assertTrue(t.getMessage().contains("--max-size 4097"), t.getMessage());
                })
                .verify(WAIT);
        assertEquals(0, conn.sent.get());
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
