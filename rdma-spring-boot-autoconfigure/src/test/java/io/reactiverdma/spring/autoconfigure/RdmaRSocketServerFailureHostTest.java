package io.reactiverdma.spring.autoconfigure;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.rsocket.RdmaClientTransport;
import io.reactiverdma.rsocket.RdmaServerChannel;
import io.reactiverdma.test.LoopbackRdma;
import io.rsocket.exceptions.ConnectionErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.frame.FrameHeaderCodec;
import io.rsocket.frame.FrameType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.LifecycleAutoConfiguration;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.messaging.rsocket.RSocketRequester;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configured RSocket server over RDMA when things go wrong, at the Spring level (Boot's
 * RSocketMessageHandler serving {@code @MessageMapping} controllers, requesters from Boot's
 * RSocketRequester.Builder), on the loopback device: the server stops under a request-stream, a peer sends a
 * malformed frame, a requester sends a frame above the server's limit. Loopback only: what is Spring's here (the
 * lifecycle, the wiring of the handler) does not depend on the device, the transport's own failure behaviour is
 * specified on both stacks by rdma-rsocket's RSocketFailureScenario, and every Spring start costs tens of seconds
 * in the VM (the Spring sample's RSocketDemoRxeTest is the Spring run on rxe).
 */
@Timeout(180)
class RdmaRSocketServerFailureHostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The server's shutdown timeout in these tests: the bound a stopping server is held to. */
    private static final Duration SHUTDOWN = Duration.ofSeconds(10);
    private static final int FRAME_LIMIT = 4096;

    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(LifecycleAutoConfiguration.class,
                    RSocketStrategiesAutoConfiguration.class, RSocketMessagingAutoConfiguration.class,
                    RSocketRequesterAutoConfiguration.class, RdmaAutoConfiguration.class,
                    RdmaMetricsAutoConfiguration.class, RdmaRSocketServerAutoConfiguration.class,
                    RdmaRSocketHealthAutoConfiguration.class))
            .withUserConfiguration(Endpoints.class)
            .withPropertyValues("reactive-rdma.rsocket.server.host=" + rdma.host(),
                    "reactive-rdma.rsocket.server.port=0",
                    "reactive-rdma.rsocket.server.receive-buffer-size=" + FRAME_LIMIT,
                    "reactive-rdma.rsocket.server.shutdown-timeout=" + SHUTDOWN.toSeconds() + "s",
                    // Far above the server's own bound: a stop that waited for it would show.
                    "spring.lifecycle.timeout-per-shutdown-phase=120s");

    /**
     * The server's application stops (its process going away looks the same on the wire: the RDMA connections
     * close, no RSocket frame is sent) while a requester reads an endless request-stream: the stream fails with
     * ClosedChannelException, and the context's close ends, both within the server's shutdown timeout.
     */
    @Test
    void stoppingTheServerUnderARequestStreamFailsTheStreamTypedAndEndsWithinTheShutdownTimeout() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed();
            RSocketRequester requester = requester(ctx.getBean(RSocketRequester.Builder.class),
                    ctx.getBean(RdmaRSocketServerLifecycle.class), FRAME_LIMIT);
            CompletableFuture<Long> closedAfterNanos = new CompletableFuture<>();
            long[] closeStarted = new long[1];
            try {
                StepVerifier.create(requester.route("endless").retrieveFlux(String.class).limitRate(32))
                        .expectNextCount(100) // the stream is flowing
                        .then(() -> {
                            closeStarted[0] = System.nanoTime();
                            CompletableFuture.runAsync(() -> {
                                ctx.close();
                                closedAfterNanos.complete(System.nanoTime() - closeStarted[0]);
                            });
                        })
                        .thenConsumeWhile(s -> true)
                        .expectErrorSatisfies(e -> {
                            Duration after = Duration.ofNanos(System.nanoTime() - closeStarted[0]);
                            assertThat(e).as("the stream's error").isInstanceOf(ClosedChannelException.class);
                            assertThat(after).as("the stream failed after the stop began").isLessThan(SHUTDOWN);
                        })
                        .verify(WAIT);
                Duration closed = Duration.ofNanos(closedAfterNanos.get(WAIT.toSeconds(), TimeUnit.SECONDS));
                assertThat(closed).as("the context's close with a stream in flight").isLessThan(SHUTDOWN);
            } finally {
                requester.dispose();
            }
        });
    }

    /**
     * A peer sends 3 bytes: it gets a connection ERROR frame naming the fault and its connection closes; the
     * server stays up (health UP) and serves an open requester and a new one.
     */
    @Test
    void aMalformedFrameClosesThatConnectionWithAnRSocketErrorAndTheServerServesOthers() {
        runner.run(ctx -> {
            RdmaRSocketServerLifecycle server = ctx.getBean(RdmaRSocketServerLifecycle.class);
            RSocketRequester.Builder builder = ctx.getBean(RSocketRequester.Builder.class);
            RSocketRequester open = requester(builder, server, FRAME_LIMIT);
            try {
                assertEchoed(open, "before");
                RdmaConnection raw = client(server, FRAME_LIMIT).connect().block(WAIT);
                assertThat(raw).isNotNull();
                List<byte[]> got;
                try {
                    StepVerifier.create(raw.send(ByteBuffer.wrap(new byte[] {1, 2, 3}))).expectComplete().verify(WAIT);
                    got = raw.receive().map(m -> {
                        try {
                            return m.toByteArray();
                        } finally {
                            m.release();
                        }
                    }).collectList().block(WAIT);
                } finally {
                    raw.dispose();
                }
                assertThat(got).as("what the server sent before it closed the connection").hasSize(1);
                ByteBuf frame = Unpooled.wrappedBuffer(got.get(0));
                assertThat(FrameHeaderCodec.streamId(frame)).isZero();
                assertThat(FrameHeaderCodec.frameType(frame)).isEqualTo(FrameType.ERROR);
                assertThat(ErrorFrameCodec.errorCode(frame)).isEqualTo(ErrorFrameCodec.CONNECTION_ERROR);
                assertThat(ErrorFrameCodec.dataUtf8(frame)).contains("3 bytes is not an RSocket frame");

                assertEchoed(open, "after a malformed peer");
                RSocketRequester another = requester(builder, server, FRAME_LIMIT);
                try {
                    assertEchoed(another, "a new requester");
                } finally {
                    another.dispose();
                }
                assertThat(ctx.getBean(RdmaRSocketHealthIndicator.class).health().getStatus()).isEqualTo(Status.UP);
            } finally {
                open.dispose();
            }
        });
    }

    /**
     * A requester whose own frames may be 64 KiB sends a 10,000-byte payload to the server's 4 KiB frames
     * without fragmenting: it fails with a ConnectionErrorException naming the server's limit, the controller
     * never sees it (nothing was posted), and the server goes on serving others.
     */
    @Test
    void aFrameAboveTheServersLimitFailsTypedNamingTheLimitBeforeItIsSent() {
        runner.run(ctx -> {
            RdmaRSocketServerLifecycle server = ctx.getBean(RdmaRSocketServerLifecycle.class);
            RSocketRequester.Builder builder = ctx.getBean(RSocketRequester.Builder.class);
            Endpoints endpoints = ctx.getBean(Endpoints.class);
            RSocketRequester big = builder.transport(RdmaClientTransport.create(client(server, 64 * 1024)));
            try {
                StepVerifier.create(big.route("echo").data("x".repeat(10_000)).retrieveMono(String.class))
                        .expectErrorSatisfies(e -> assertThat(e).isInstanceOf(ConnectionErrorException.class)
                                .hasMessageContaining("larger than the peer's " + FRAME_LIMIT + "-byte receive buffers"))
                        .verify(WAIT);
            } finally {
                big.dispose();
            }
            assertThat(endpoints.echoed.get()).as("payloads the controller saw").isZero();
            RSocketRequester other = requester(builder, server, FRAME_LIMIT);
            try {
                assertEchoed(other, "after a too large frame");
            } finally {
                other.dispose();
            }
        });
    }

    private static void assertEchoed(RSocketRequester requester, String what) {
        StepVerifier.create(requester.route("echo").data(what).retrieveMono(String.class))
                .expectNext("echo:" + what).expectComplete().verify(WAIT);
    }

    private static RdmaClient client(RdmaRSocketServerLifecycle server, int receiveBufferSize) {
        RdmaServerChannel channel = server.server();
        assertThat(channel).as("the server is listening").isNotNull();
        return RdmaClient.create().host(rdma.host()).port(channel.address().getPort())
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, receiveBufferSize);
    }

    private static RSocketRequester requester(RSocketRequester.Builder builder, RdmaRSocketServerLifecycle server,
            int receiveBufferSize) {
        return builder.transport(RdmaClientTransport.create(client(server, receiveBufferSize)));
    }

    @Controller
    static class Endpoints {
        final AtomicInteger echoed = new AtomicInteger();

        @MessageMapping("echo")
        Mono<String> echo(String s) {
            echoed.incrementAndGet();
            return Mono.just("echo:" + s);
        }

        /** Never completes: as many items as asked for, for as long as asked. */
        @MessageMapping("endless")
        Flux<String> endless() {
            return Flux.generate(() -> 0L, (n, sink) -> {
                sink.next(Long.toString(n));
                return n + 1;
            });
        }
    }
}
