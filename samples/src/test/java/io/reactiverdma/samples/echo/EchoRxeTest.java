package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.samples.common.DeviceAddress;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.test.StepVerifier;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The echo sample on a real RDMA device (rxe in the VM): server and client in this JVM, on the device's
 * address, through the reactive API and the engine.
 */
@Tag(RxeTestSupport.TAG)
class EchoRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Consumer<String> LOG = line -> System.out.println("  " + line);

    private EchoServer server;

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    @AfterEach
    void close() {
        if (server != null) {
            server.close();
        }
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    @ParameterizedTest(name = "{0}-byte messages")
    @ValueSource(ints = {1, 64, 4096})
    void twoHundredMessagesEchoedByteForByte(int size) {
        server = EchoServer.start(host(), 0, 4096, WAIT, LOG);
        RoundTripStats stats = EchoClient.run(host(), server.address().getPort(), 200, size, WAIT, LOG);
        assertEquals(200, stats.count());
        assertTrue(stats.minNs() > 0);
        System.out.println("  " + size + " B: " + stats.summary());
        server.close();
        assertEquals(200, server.messagesEchoed());
        assertEquals(0, server.connectionCount());
    }

    @Test
    void demoFindsTheDeviceAddressWithoutJnaAndPrintsTheSummary() {
        assertEquals(host(), DeviceAddress.find().host(), "sysfs + NetworkInterface find RXE_IP");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Echo.run(new String[] {"demo", "-n", "100", "-s", "64"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        System.out.print(text);
        assertEquals(0, status, err.toString(StandardCharsets.UTF_8));
        assertTrue(text.contains("echo demo: RDMA device "), text);
        assertTrue(text.contains("echo client: 100 messages of 64 bytes, one at a time: all 100 replies verified byte for byte"), text);
        assertTrue(text.contains("echo client: 100 round trips: min "), text);
        assertTrue(text.contains("echo server: echoed 100 messages"), text);
    }

    @Test
    void aMessageLargerThanTheServerAcceptsIsRefusedWithATypedError() {
        server = EchoServer.start(host(), 0, 4096, WAIT, LOG);
        InvalidRequestException e = assertThrows(InvalidRequestException.class,
                () -> EchoClient.run(host(), server.address().getPort(), 1, 4097, WAIT, LOG));
        assertEquals(InvalidRequestException.Reason.MESSAGE_TOO_LARGE, e.reason());
        assertEquals(0, server.messagesEchoed());
    }

    @Test
    void aClientWhoseServerGoesAwayFailsWithConnectionClosedInsteadOfHanging() {
        server = EchoServer.start(host(), 0, 4096, WAIT, LOG);
        RdmaConnection conn = EchoClient.client(host(), server.address().getPort(), 64, WAIT).connectNow(WAIT);
        try {
            // Far more messages than will be sent, and a reply timeout longer than the test's bound: only
            // the connection closing can end this in time.
            StepVerifier.create(EchoClient.pingPong(conn, 1_000_000, 64, Duration.ofSeconds(120)))
                    .then(() -> {
                        awaitEchoed(20);
                        server.dispose();
                    })
                    .expectErrorSatisfies(t -> {
                        assertTrue(t instanceof ConnectionClosedException, "ConnectionClosedException, got " + t);
                        System.out.println("  client failed as expected: " + t);
                    })
                    .verify(Duration.ofSeconds(60));
            server.onDispose().block(WAIT);
            conn.onDispose().block(WAIT);
            assertTrue(conn.isDisposed());
        } finally {
            conn.dispose();
        }
    }

    private void awaitEchoed(long n) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.messagesEchoed() < n) {
            if (System.nanoTime() - deadline > 0) {
                fail("the server echoed only " + server.messagesEchoed() + " messages within " + WAIT);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
    }
}
