package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
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
import reactor.core.publisher.Sinks;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The real engine, end to end, on the in-JVM loopback device ({@link LoopbackStack}): a server engine and a
 * client engine on one loopback stack (so each side has its own completion queues and pollers, as two hosts
 * would), connected once per trial with the default options (credit flow control on, 64-byte
 * {@code MAX_INLINE_DATA}, shared CQs) and the idle strategy of {@link #idle} on both sides. The server's
 * connection handler subscribes to {@code receive()} and releases every message at once, or (with
 * {@link #receiver} {@code decode}) to {@code receive(decoder)}, so its receives are reposted and its credits
 * returned as fast as the engine can.
 *
 * <p>Only public entry points are used ({@code new RdmaEngine(LoopbackStack)}, {@code bind}, {@code connect},
 * the {@link RdmaConnection} operations), so the same file runs on the engine before and after the
 * owner-thread rewrite. Every wait is bounded ({@link #WAIT}): a lost signal fails the run instead of
 * hanging it. The waits are Reactor's {@code block(Duration)} on the benchmark thread, whose latch and
 * subscriber are part of every number here.
 * <ul>
 *   <li>{@link #sendRegisteredBuffer}: one {@code send(RegisteredBuffer)} of {@value #MESSAGE_SIZE} bytes,
 *       subscribed and waited for: subscription on the benchmark thread, the engine's submit (a hand-off to
 *       the poller thread, or the old engine's locked post on the caller's thread), {@code ibv_post_send} on
 *       the loopback device (inline), the device's wire thread delivering it into a server receive and
 *       writing both completions, the client poller's completion dispatch, the Mono's signal, and the wake-up
 *       of the benchmark thread. The server side (receive completion, message handle, release, repost, credit
 *       update) runs concurrently on the server's poller.</li>
 *   <li>{@link #sendByteBuffer}: the same with {@code send(ByteBuffer)} of a heap buffer, which the engine
 *       first copies into a pooled registered buffer (then posted inline, the pooled buffer freed at post).</li>
 *   <li>{@link #pipelinedSends}: {@value #PIPELINE} {@code send(RegisteredBuffer)} in flight at once
 *       ({@code Flux.range(0, 64).flatMap(i -> send(buf), 64)}), waited for together: the cost per message
 *       when the pollers and the device stay busy (credits and send slots pace it; the score is per message).</li>
 *   <li>{@link #streamingSend}: {@value #STREAM} messages of {@value #MESSAGE_SIZE} bytes through one
 *       {@code send(Publisher)} (the streaming path: copied into the stream's registered staging ring on the
 *       caller's thread, posted in chains, one in {@code SIGNAL_INTERVAL} signalled), waited for together; the
 *       score is per message.</li>
 *   <li>{@link #write64}: one RDMA WRITE of {@value #MESSAGE_SIZE} bytes into a region the server registered
 *       for remote writes (one-sided: no receive, no credit at the server), subscribed and waited for.</li>
 * </ul>
 * With {@code -prof gc}, {@code gc.alloc.rate.norm} is the allocation per operation of all the JVM's threads
 * (JMH 1.37 reads {@code ThreadMXBean.getTotalThreadAllocatedBytes}): the benchmark thread, both engines'
 * pollers and rdma_cm threads, and the loopback device's wire thread (test code, the same before and after),
 * not of the benchmark thread alone.
 *
 * <p>Run: {@code scripts/bench-engine LoopbackEngineBenchmark -f 1 -wi 3 -i 5 -w 1 -r 2} ({@code -prof gc}
 * by default). Threads: the benchmark thread, one poller per engine (spinning with {@code busySpin}), the
 * device's wire thread and the rdma_cm threads: on a machine with fewer free cores than that the
 * {@code busySpin} numbers measure the OS scheduler more than the engine.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class LoopbackEngineBenchmark {
    /** Every wait of the benchmark (connect, each operation, close). */
    static final Duration WAIT = Duration.ofSeconds(10);
    /** The message: 64 bytes, inline with the default MAX_INLINE_DATA (as EngineOverheadBenchmark). */
    static final int MESSAGE_SIZE = 64;
    /** Sends in flight at once in {@link #pipelinedSends} (the server's default receive depth). */
    static final int PIPELINE = 64;
    /** Messages per {@link #streamingSend} invocation. */
    static final int STREAM = 4096;

    /** Both sides' {@link RdmaOption#IDLE_STRATEGY}: {@code busySpin} or the default {@code eventDriven}. */
    @Param({"busySpin", "eventDriven"})
    public String idle;

    /**
     * How the server consumes: {@code release} ({@code receive()}, each message released at once) or
     * {@code decode} ({@code receive(decoder)}, no message handle: the allocation-free receive path).
     */
    @Param({"release", "decode"})
    public String receiver;

    private LoopbackStack stack;
    private DisposableRdmaServer server;
    private RdmaConnection client;
    private RegisteredBuffer registered;
    private ByteBuffer heap;
    private RegisteredBuffer exposed;
    private RemoteRegion region;
    private Mono<Void> pipeline;
    private Mono<Void> stream;

    @Setup(Level.Trial)
    public void connect() {
        stack = LoopbackStack.create();
        RdmaEngine serverEngine = new RdmaEngine(stack);
        RdmaEngine clientEngine = new RdmaEngine(stack);
        PollerIdleStrategy strategy = switch (idle) {
            case "busySpin" -> PollerIdleStrategy.busySpin();
            case "eventDriven" -> PollerIdleStrategy.eventDriven();
            default -> throw new IllegalArgumentException("idle: " + idle);
        };
        RdmaTransportConfig config = RdmaTransportConfig.defaults().withHost("127.0.0.1").withPort(0)
                .withOption(RdmaOption.IDLE_STRATEGY, strategy);
        Sinks.One<RdmaConnection> accepted = Sinks.one();
        boolean decode = switch (receiver) {
            case "release" -> false;
            case "decode" -> true;
            default -> throw new IllegalArgumentException("receiver: " + receiver);
        };
        server = serverEngine.bind(config, c -> {
            if (decode) {
                c.receive(RdmaMessage::length).subscribe(length -> { }, e -> { }); // 64: a cached Integer
            } else {
                c.receive().subscribe(RdmaMessage::release, e -> { });
            }
            accepted.tryEmitValue(c);
            return c.onDispose();
        }).block(WAIT);
        if (server == null) {
            throw new IllegalStateException("bind gave no server");
        }
        client = clientEngine.connect(config.withPort(server.port())).block(WAIT);
        RdmaConnection serverSide = accepted.asMono().block(WAIT);
        if (client == null || serverSide == null) {
            throw new IllegalStateException("no connection");
        }
        registered = client.memory().allocate(MESSAGE_SIZE);
        heap = ByteBuffer.allocate(MESSAGE_SIZE);
        for (int i = 0; i < MESSAGE_SIZE; i++) {
            registered.buffer().put(i, (byte) i);
            heap.put(i, (byte) i);
        }
        exposed = serverSide.memory().allocateRegistered(MESSAGE_SIZE, RemoteAccess.WRITE);
        region = RemoteRegion.fromBytes(exposed.remoteRegion().toBytes());
        RdmaConnection c = client;
        RegisteredBuffer b = registered;
        pipeline = Flux.range(0, PIPELINE).flatMap(i -> c.send(b), PIPELINE).then();
        // The same heap buffer STREAM times, from an array: the upstream itself allocates nothing per message.
        ByteBuffer[] messages = new ByteBuffer[STREAM];
        java.util.Arrays.fill(messages, heap);
        stream = c.send(Flux.fromArray(messages));
    }

    @TearDown(Level.Trial)
    public void close() {
        try {
            if (registered != null) {
                registered.release();
            }
            if (exposed != null) {
                exposed.release();
            }
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

    @Benchmark
    public void sendRegisteredBuffer() {
        client.send(registered).block(WAIT);
    }

    @Benchmark
    public void sendByteBuffer() {
        client.send(heap).block(WAIT);
    }

    /** {@value #PIPELINE} sends per invocation: the score is per message. */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public void pipelinedSends() {
        pipeline.block(WAIT);
    }

    /** {@value #STREAM} messages through one {@code send(Publisher)}: the score is per message. */
    @Benchmark
    @OperationsPerInvocation(STREAM)
    public void streamingSend() {
        stream.block(WAIT);
    }

    @Benchmark
    public void write64() {
        client.write(registered, region).block(WAIT);
    }
}
