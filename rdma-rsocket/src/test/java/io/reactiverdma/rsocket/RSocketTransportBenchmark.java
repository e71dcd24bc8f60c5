package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.RdmaEngine;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.util.ByteBufPayload;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What the RSocket transport costs per frame beside the engine's own streaming send, in one run: the real
 * engine on the zero-cost loopback device ({@link LoopbackStack#zeroCost()}: a post completes inside
 * {@code ibv_post_send}, so what is left is Java: engine, transport, RSocket, Reactor), one engine serving
 * both ends with shared completion queues, so both ends are on one poller thread (as
 * {@code ZeroCostEngineBenchmark} does; {@code busySpin}: two busy threads, the poller and the benchmark
 * thread). Every score is per 64-byte payload, both sides included:
 * <ul>
 *   <li>{@link #engineStreamingSend}: the reference: {@value #BATCH} messages through one
 *       {@code send(Publisher)} to a {@code receive(decoder)} peer.</li>
 *   <li>{@link #rsocketRequestStream}: one request-stream of {@value #BATCH} payloads (the server emits them,
 *       the client releases each), over {@code RdmaClientTransport}/{@code RdmaServerTransport}.</li>
 *   <li>{@link #rsocketFireAndForget}: {@value #BATCH} fire-and-forgets, waited for until the server's
 *       handler has seen them all.</li>
 * </ul>
 * The aim: the transport's cost per frame at most 2x the engine's plain streaming send. RSocket's
 * own work (frame encoding, stream bookkeeping, its {@code Payload} objects) is part of the RSocket scores,
 * as it is for every RSocket transport. Both ends decode with {@code PayloadDecoder.ZERO_COPY}, as Spring Boot's
 * RSocket server does (RSocket's default decoder copies every payload). With {@code -prof gc}, {@code gc.alloc.rate.norm} counts every
 * thread of the JVM.
 *
 * <p>Run: {@code scripts/bench-rsocket -f 1 -wi 3 -i 5} (gc profiler by default; JMH's own filters select
 * a benchmark, e.g. {@code scripts/bench-rsocket RSocketTransportBenchmark.rsocketRequestStream -p idle=busySpin}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RSocketTransportBenchmark {
    /** Every wait for a batch: a lost frame fails the run instead of hanging it. */
    static final Duration WAIT = Duration.ofSeconds(30);
    /** Bind, connect and close: a fork's first connection also loads and compiles the engine and RSocket. */
    static final Duration SETUP_WAIT = Duration.ofSeconds(120);
    static final int PAYLOAD_SIZE = 64;
    static final int BATCH = 1024;

    /** The poller's {@link RdmaOption#IDLE_STRATEGY}: {@code busySpin} or the default {@code eventDriven}. */
    @Param({"busySpin", "eventDriven"})
    public String idle;

    private LoopbackStack stack;
    private RdmaEngine engine;
    private DisposableRdmaServer plainServer;
    private RdmaConnection plainClient;
    private Mono<Void> plainStream;
    private RdmaServerChannel rsocketServer;
    private RSocket rsocket;
    private ByteBuf data;
    private Flux<Payload> streamRequest;
    private final AtomicLong firesSeen = new AtomicLong();
    private long firesSent;

    @Setup(Level.Trial)
    public void connect() {
        stack = LoopbackStack.zeroCost();
        engine = new RdmaEngine(stack);
        PollerIdleStrategy strategy = switch (idle) {
            case "busySpin" -> PollerIdleStrategy.busySpin();
            case "eventDriven" -> PollerIdleStrategy.eventDriven();
            default -> throw new IllegalArgumentException("idle: " + idle);
        };
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.IDLE_STRATEGY, strategy);
        byte[] bytes = new byte[PAYLOAD_SIZE];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) i;
        }
        connectPlain(config, bytes);
        connectRSocket(config, bytes);
    }

    /** The engine alone: a client streaming to a server that consumes with the allocation-free decoder. */
    private void connectPlain(RdmaTransportConfig config, byte[] bytes) {
        plainServer = engine.bind(config, c -> {
            c.receive(RdmaMessage::length).subscribe(length -> { }, e -> { });
            return c.onDispose();
        }).block(SETUP_WAIT);
        if (plainServer == null) {
            throw new IllegalStateException("bind gave no server");
        }
        plainClient = engine.connect(config.withPort(plainServer.port())).block(SETUP_WAIT);
        if (plainClient == null) {
            throw new IllegalStateException("no connection");
        }
        ByteBuffer[] messages = new ByteBuffer[BATCH];
        Arrays.fill(messages, ByteBuffer.wrap(bytes));
        plainStream = plainClient.send(Flux.fromArray(messages));
    }

    /** RSocket over the same engine: the server answers a request-stream with BATCH payloads, counts fires. */
    private void connectRSocket(RdmaTransportConfig config, byte[] bytes) {
        int maxFrame = config.option(RdmaOption.RECEIVE_BUFFER_SIZE);
        data = Unpooled.unreleasableBuffer(Unpooled.directBuffer(PAYLOAD_SIZE).writeBytes(bytes));
        RSocket handler = new RSocket() {
            @Override
            public Flux<Payload> requestStream(Payload request) {
                request.release();
                return Flux.range(0, BATCH).map(i -> ByteBufPayload.create(data.retainedSlice()));
            }

            @Override
            public Mono<Void> fireAndForget(Payload payload) {
                payload.release();
                firesSeen.incrementAndGet();
                return Mono.empty();
            }
        };
        RdmaServerTransport serverTransport = new DefaultRdmaServerTransport(h -> engine.bind(config, h), maxFrame,
                ByteBufAllocator.DEFAULT);
        rsocketServer = RSocketServer.create((setup, peer) -> Mono.just(handler))
                .payloadDecoder(PayloadDecoder.ZERO_COPY).bind(serverTransport)
                .block(SETUP_WAIT);
        if (rsocketServer == null) {
            throw new IllegalStateException("RSocket bind gave no server");
        }
        RdmaClientTransport clientTransport = new DefaultRdmaClientTransport(
                () -> engine.connect(config.withPort(rsocketServer.address().getPort())), maxFrame,
                ByteBufAllocator.DEFAULT);
        rsocket = RSocketConnector.create().payloadDecoder(PayloadDecoder.ZERO_COPY).connect(clientTransport).block(SETUP_WAIT);
        if (rsocket == null) {
            throw new IllegalStateException("no RSocket");
        }
        streamRequest = Flux.defer(() -> rsocket.requestStream(ByteBufPayload.create(data.retainedSlice())));
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            if (rsocket != null) {
                rsocket.dispose();
                rsocket.onClose().onErrorResume(e -> Mono.empty()).block(SETUP_WAIT);
            }
            if (rsocketServer != null) {
                rsocketServer.dispose();
                rsocketServer.onClose().onErrorResume(e -> Mono.empty()).block(SETUP_WAIT);
            }
            if (plainClient != null) {
                plainClient.dispose();
                plainClient.onDispose().block(SETUP_WAIT);
            }
            if (plainServer != null) {
                plainServer.disposeNow(SETUP_WAIT);
            }
            engine.shutdown().block(SETUP_WAIT);
        } finally {
            stack.close();
        }
    }

    /** The engine alone: {@value #BATCH} 64-byte messages through one {@code send(Publisher)}; per message. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void engineStreamingSend() {
        plainStream.block(WAIT);
    }

    /** One RSocket request-stream of {@value #BATCH} 64-byte payloads, each released by the client; per payload. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long rsocketRequestStream() {
        Long n = streamRequest.doOnNext(Payload::release).count().block(WAIT);
        if (n == null || n != BATCH) {
            throw new IllegalStateException("request-stream gave " + n + " of " + BATCH + " payloads");
        }
        return n;
    }

    /** {@value #BATCH} fire-and-forgets of 64 bytes, until the server's handler has seen them all; per frame. */
    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void rsocketFireAndForget() {
        Flux.range(0, BATCH).flatMap(i -> rsocket.fireAndForget(ByteBufPayload.create(data.retainedSlice())), BATCH)
                .then().block(WAIT);
        firesSent += BATCH;
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (firesSeen.get() < firesSent) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the server saw " + firesSeen.get() + " of " + firesSent + " fires");
            }
            LockSupport.parkNanos(1_000);
        }
    }
}
