package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.test.LoopbackRdma;
import io.rsocket.DuplexConnection;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.core.Resume;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.util.ByteBufPayload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RSocket's session resumption over RDMA: a stream goes on over a new RDMA connection after the old one failed,
 * and many resumptions leave nothing behind. Loopback device only (each test says why).
 */
@Timeout(300)
class RSocketResumptionHostTest {
    private static final int RESUMES = 200;
    private static final int ITEMS = 3_000;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    private RdmaServerChannel server;
    private RSocket client;

    @AfterEach
    void close() {
        if (client != null) {
            client.dispose();
        }
        if (server != null) {
            server.dispose();
            server.onClose().block(WAIT);
        }
        RdmaTransportSuite.awaitNoFrameHeld(WAIT);
    }

    /**
     * The RDMA connection itself fails (not closed by RSocket, as in {@link RdmaResumableTransportHostTest}): the
     * device refuses a post of sends mid-stream, the engine closes that RDMA connection, the client resumes over
     * a new one, and the stream goes on where it was. Loopback only: refusing a post is fault injection that only
     * the loopback device has.
     */
    @Test
    void aStreamGoesOnOverANewRdmaConnectionAfterTheOldOneFailsEveryItemOnceInOrder() {
        server = RSocketServer.create(SocketAcceptor.forRequestStream(request -> {
                    request.release();
                    return Flux.range(0, ITEMS).map(i -> ByteBufPayload.create(Integer.toString(i)));
                }))
                .resume(new Resume().sessionDuration(WAIT))
                .bind(RdmaServerTransport.create(RdmaServer.create().host(rdma.host()).port(0)
                        .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16)))
                .block(WAIT);
        assertNotNull(server);
        RdmaClientTransport rdmaTransport = RdmaClientTransport.create(RdmaClient.create().host(rdma.host())
                .port(server.address().getPort()).option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16));
        AtomicInteger connects = new AtomicInteger();
        ClientTransport counting = () -> rdmaTransport.connect().doOnNext(c -> connects.incrementAndGet());
        client = RSocketConnector.create()
                .resume(new Resume().sessionDuration(WAIT).retry(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofMillis(100))))
                .connect(counting)
                .block(WAIT);
        assertNotNull(client);

        List<Integer> received = new ArrayList<>();
        StepVerifier.create(client.requestStream(ByteBufPayload.create("go"))
                        .map(RSocketResumptionHostTest::item)
                        .limitRate(16)
                        .doOnNext(i -> {
                            if (i == ITEMS / 3) {
                                // The next post of sends on the device (either side's) is refused: the engine
                                // closes that RDMA connection, which RSocket sees as a broken connection.
                                rdma.faults().refuseNextSendPost();
                            }
                        }))
                .recordWith(() -> received)
                .expectNextCount(ITEMS)
                .expectComplete()
                .verify(WAIT);

        assertEquals(IntStream.range(0, ITEMS).boxed().collect(Collectors.toList()), received,
                "every item once, in order");
        assertTrue(connects.get() >= 2, "the client resumed over a new RDMA connection: " + connects.get()
                + " connection(s)");
    }

    private static int item(Payload p) {
        try {
            return Integer.parseInt(p.getDataUtf8());
        } finally {
            p.release();
        }
    }

    /**
     * What a resumed RSocket session leaves behind: the client's RDMA connection is closed again and again (as the
     * suite's resumable variant does with its random disconnects; here the client's and the server's side in turn),
     * RSocket resumes each time over a new RDMA connection, and after {@value #RESUMES} resumptions the engine must be back where it was after the first
     * connect: as many poller threads, one server connection, no received frame held. Loopback device only: the
     * counts are of this JVM's engine threads, and rxe would take minutes for 200 RDMA connects under emulation.
     */
    @Test
    void twoHundredResumptionsLeaveAsManyPollerThreadsAndServerConnectionsAsTheFirstConnect() {
        RdmaServerTransport rdmaServer = RdmaServerTransport.create(RdmaServer.create().host(rdma.host()).port(0)
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16));
        AtomicReference<DuplexConnection> serverSide = new AtomicReference<>();
        ServerTransport<RdmaServerChannel> rememberingServer = acceptor -> rdmaServer.start(c -> {
            serverSide.set(c);
            return acceptor.apply(c);
        });
        server = RSocketServer.create(SocketAcceptor.forRequestResponse(request -> {
                    request.release();
                    return Mono.just(ByteBufPayload.create("pong"));
                }))
                .resume(new Resume().sessionDuration(WAIT))
                .bind(rememberingServer)
                .block(WAIT);
        assertNotNull(server);
        RdmaClientTransport rdmaTransport = RdmaClientTransport.create(RdmaClient.create().host(rdma.host())
                .port(server.address().getPort()).option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16));
        AtomicInteger connects = new AtomicInteger();
        AtomicReference<DuplexConnection> current = new AtomicReference<>();
        ClientTransport remembering = () -> rdmaTransport.connect().doOnNext(c -> {
            current.set(c);
            connects.incrementAndGet();
        });
        client = RSocketConnector.create()
                .resume(new Resume().sessionDuration(WAIT)
                        .retry(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofMillis(10))))
                .connect(remembering)
                .block(WAIT);
        assertNotNull(client);
        assertEquals("pong", roundTrip());
        int pollersAtFirstConnect = pollerThreads();
        assertTrue(pollersAtFirstConnect > 0, "the engine's poller threads are named rdma-poller-*");
        int serverConnectionsAtFirstConnect = server.connectionCount();
        assertEquals(1, serverConnectionsAtFirstConnect, "server connections after the first connect");

        for (int i = 1; i <= RESUMES; i++) {
            // Either side closes, as the suite's random disconnects do.
            (i % 2 == 0 ? serverSide : current).get().dispose();
            int expected = i + 1;
            awaitAtLeast(expected, connects::get, "RDMA connections opened by the client");
            assertEquals("pong", roundTrip(), "a request after resumption " + i);
        }

        awaitAtMost(serverConnectionsAtFirstConnect, server::connectionCount, "server connections");
        awaitAtMost(pollersAtFirstConnect, RSocketResumptionHostTest::pollerThreads,
                "rdma-poller-* threads (" + pollersAtFirstConnect + " after the first connect)");
        assertEquals(0, ReceivedFrame.held(), "received frames held");
    }

    private String roundTrip() {
        return client.requestResponse(ByteBufPayload.create("ping")).map(p -> {
            try {
                return p.getDataUtf8();
            } finally {
                p.release();
            }
        }).block(WAIT);
    }

    static int pollerThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("rdma-poller-"))
                .count();
    }

    private static void awaitAtLeast(int expected, IntSupplier actual, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (actual.getAsInt() < expected && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(1_000_000);
        }
        if (actual.getAsInt() < expected) {
            throw new AssertionError(what + ": " + actual.getAsInt() + " after " + WAIT + ", expected " + expected);
        }
    }

    private static void awaitAtMost(int expected, IntSupplier actual, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (actual.getAsInt() > expected && System.nanoTime() - deadline < 0) {
            LockSupport.parkNanos(10_000_000);
        }
        assertEquals(expected, actual.getAsInt(), what);
    }
}
