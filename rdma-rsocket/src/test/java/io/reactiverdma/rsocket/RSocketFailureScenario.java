package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.rsocket.RSocket;
import io.rsocket.SocketAcceptor;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.exceptions.ConnectionErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.frame.FrameHeaderCodec;
import io.rsocket.frame.FrameType;
import io.rsocket.util.DefaultPayload;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an RSocket server over RDMA does with a peer that breaks the protocol: the offending connection ends
 * with an RSocket connection error, and the server goes on serving the others. The test class says
 * which device.
 */
final class RSocketFailureScenario implements AutoCloseable {
    static final int SERVER_FRAME_LIMIT = 4096;

    private final String host;
    private final Duration wait;
    private RdmaServerChannel server;
    private RSocket client;

    RSocketFailureScenario(String host, Duration wait) {
        this.host = host;
        this.wait = wait;
    }

    private RdmaClient rdmaClient(int receiveBufferSize) {
        return RdmaClient.create().host(host).port(server.address().getPort())
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, receiveBufferSize)
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16);
    }

    private RdmaClientTransport client(int receiveBufferSize) {
        return RdmaClientTransport.create(rdmaClient(receiveBufferSize));
    }

    /** An echo server with 4 KiB frames, and one well-behaved client of it that has made a request. */
    void start() {
        server = RSocketServer.create(SocketAcceptor.forRequestResponse(p -> Mono.just(p)))
                .bind(RdmaServerTransport.create(RdmaServer.create().host(host).port(0)
                        .option(RdmaOption.RECEIVE_BUFFER_SIZE, SERVER_FRAME_LIMIT)
                        .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 16)))
                .block(wait);
        assertNotNull(server);
        client = RSocketConnector.create()
                .connect(client(SERVER_FRAME_LIMIT)).block(wait);
        assertNotNull(client);
        assertServed(client, "before");
    }

    void assertServed(RSocket rsocket, String what) {
        StepVerifier.create(rsocket.requestResponse(DefaultPayload.create(what)).map(p -> {
                    try {
                        return p.getDataUtf8();
                    } finally {
                        p.release();
                    }
                }))
                .expectNext(what)
                .expectComplete()
                .verify(wait);
    }

    /** A peer sends 3 bytes: it gets a connection ERROR naming the fault, then its connection closes. */
    void malformedFrameEndsThatConnectionWithAnErrorFrame() {
        RdmaConnection raw = rdmaClient(SERVER_FRAME_LIMIT).connect().block(wait);
        assertNotNull(raw);
        try {
            StepVerifier.create(raw.send(ByteBuffer.wrap(new byte[] {1, 2, 3}))).expectComplete().verify(wait);
            List<byte[]> got = raw.receive().map(m -> {
                try {
                    return m.toByteArray();
                } finally {
                    m.release();
                }
            }).collectList().block(wait);
            assertNotNull(got, "the server never closed the connection");
            assertEquals(1, got.size(), "messages before the close: " + got.size());
            ByteBuf frame = Unpooled.wrappedBuffer(got.get(0));
            assertEquals(0, FrameHeaderCodec.streamId(frame));
            assertEquals(FrameType.ERROR, FrameHeaderCodec.frameType(frame));
            assertEquals(ErrorFrameCodec.CONNECTION_ERROR, ErrorFrameCodec.errorCode(frame));
            String message = ErrorFrameCodec.dataUtf8(frame);
            assertTrue(message.contains("3 bytes is not an RSocket frame"), message);
        } finally {
            raw.dispose();
        }
        assertServed(client, "after a malformed peer");
        RSocket another = RSocketConnector.create()
                .connect(client(SERVER_FRAME_LIMIT)).block(wait);
        assertNotNull(another);
        try {
            assertServed(another, "a new client");
        } finally {
            another.dispose();
        }
    }

    /**
     * A client whose frame limit is above the server's (64 KiB against 4 KiB) sends a 10,000-byte request:
     * the request fails with a connection error naming both sizes (and the client closes with it), and the
     * server goes on serving others.
     */
    void frameAboveThePeersLimitEndsTheConnectionWithANamedError() {
        RSocket big = RSocketConnector.create()
                .connect(client(64 * 1024)).block(wait);
        assertNotNull(big);
        try {
            StepVerifier.create(big.requestResponse(DefaultPayload.create(new byte[10_000])))
                    .expectErrorSatisfies(e -> {
                        assertEquals(ConnectionErrorException.class, e.getClass(), e + " caused by " + e.getCause());
                        assertTrue(e.getMessage().contains("larger than the peer's " + SERVER_FRAME_LIMIT
                                + "-byte receive buffers"), e.getMessage());
                    })
                    .verify(wait);
            StepVerifier.create(big.onClose()).expectError(ConnectionErrorException.class).verify(wait);
        } finally {
            big.dispose();
        }
        assertServed(client, "after a too large frame");
    }

    @Override
    public void close() {
        if (client != null) {
            client.dispose();
            client.onClose().onErrorResume(e -> Mono.empty()).block(wait);
        }
        if (server != null) {
            server.dispose();
            server.onClose().block(wait);
        }
        RdmaTransportSuite.awaitNoFrameHeld(wait);
    }
}
