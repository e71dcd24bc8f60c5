package io.reactiverdma.rsocket;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.test.LoopbackRdma;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.core.Resume;
import io.rsocket.transport.ClientTransport;
import io.rsocket.util.ByteBufPayload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RSocket's session resumption over RDMA when the RDMA connection itself fails (not closed by RSocket, as in
 * {@link RdmaResumableTransportHostTest}): the device refuses a post of sends mid-stream, the engine closes that
 * RDMA connection, the client resumes over a new one, and the stream goes on where it was. Loopback device
 * only: refusing a post is fault injection that only the loopback device has.
 */
@Timeout(180)
class RSocketResumptionHostTest {
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
}
