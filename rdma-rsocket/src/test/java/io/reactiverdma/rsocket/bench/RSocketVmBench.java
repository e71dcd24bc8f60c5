package io.reactiverdma.rsocket.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.rsocket.RdmaClientTransport;
import io.reactiverdma.rsocket.RdmaServerTransport;
import io.rsocket.Closeable;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.transport.ClientTransport;
import io.rsocket.transport.ServerTransport;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.transport.netty.server.TcpServerTransport;
import io.rsocket.util.ByteBufPayload;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * The harness of {@code scripts/bench-rsocket-vm}: one JVM is the server, another the client, on the same
 * device address, over one of three transports, measuring the same two things on each:
 * <ul>
 *   <li>{@code engine}: the engine alone through the public API: a ping-pong of {@code send}/{@code receive}
 *       (the server echoes), and a stream: the client sends one command, the server answers with N messages
 *       through one {@code send(Publisher)}.</li>
 *   <li>{@code rdma}: RSocket over RDMA ({@link RdmaClientTransport}, {@link RdmaServerTransport}):
 *       request-response (the server echoes the payload) and request-stream (N payloads).</li>
 *   <li>{@code tcp}: RSocket over TCP (rsocket-transport-netty), the same two, the reference.</li>
 * </ul>
 * Latency: each request (ping) is issued from the callback that received the previous response, so no thread
 * wakes up in between; the round trip's median and p99 in microseconds. Stream: from the request (command)
 * to the last item received, items per second and MB/s (MB = 2^20), at each {@code --sizes} payload size.
 * Both RSocket ends decode with {@code PayloadDecoder.ZERO_COPY} (as Spring Boot's RSocket server does; RSocket's
 * default decoder copies every payload). The RDMA sides use {@code RECEIVE_BUFFER_SIZE} {@value #RECEIVE_BUFFER} (a 4 KiB payload plus RSocket's
 * frame header is one message) and the given poller idle strategy; everything else is the default.
 *
 * <p>Options (defaults in brackets): {@code --role server|client}, {@code --transport engine|rdma|tcp},
 * {@code --host} [$RXE_IP], {@code --port} [7600], {@code --lat-n} [2000], {@code --lat-warmup} [1000],
 * {@code --lat-size} [64], {@code --sizes} [64,4096], {@code --stream-n} [5000], {@code --stream-warmup}
 * [2000], {@code --idle busy|event} [busy].
 *
 * <p>Prints {@code RESULT <key> <value>} lines (for the script): {@code rr_median_us}, {@code rr_p99_us},
 * {@code stream_<size>_kpps}, {@code stream_<size>_MBps}.
 */
public final class RSocketVmBench {
    static final byte CMD_ECHO = 'E';
    static final byte CMD_STREAM = 'S';
    static final int RECEIVE_BUFFER = 8192;
    static final Duration WAIT = Duration.ofMinutes(5);
    /**
     * The client's RDMA connect: in the VM under a host load of 40 the first connect to a freshly started
     * server JVM did not complete within 60 s (its accept path still loading and compiling).
     */
    static final Duration CONNECT_TIMEOUT = Duration.ofMinutes(5);

    private RSocketVmBench() {
    }

    static final class Options {
        String role;
        String transport;
        String host = System.getenv("RXE_IP");
        int port = 7600;
        int latN = 2000;
        int latWarmup = 1000;
        int latSize = 64;
        int[] sizes = {64, 4096};
        int streamN = 5000;
        int streamWarmup = 2000;
        String idle = "busy";

        /** Parses {@code args}; throws {@link IllegalArgumentException} naming what is wrong. */
        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--role" -> o.role = args[++i];
                    case "--transport" -> o.transport = args[++i];
                    case "--host" -> o.host = args[++i];
                    case "--port" -> o.port = Integer.parseInt(args[++i]);
                    case "--lat-n" -> o.latN = Integer.parseInt(args[++i]);
                    case "--lat-warmup" -> o.latWarmup = Integer.parseInt(args[++i]);
                    case "--lat-size" -> o.latSize = Integer.parseInt(args[++i]);
                    case "--sizes" -> o.sizes = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                    case "--stream-n" -> o.streamN = Integer.parseInt(args[++i]);
                    case "--stream-warmup" -> o.streamWarmup = Integer.parseInt(args[++i]);
                    case "--idle" -> o.idle = args[++i];
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (o.host == null || o.host.isBlank()) {
                throw new IllegalArgumentException("no --host and RXE_IP is not set");
            }
            if (!List.of("server", "client").contains(String.valueOf(o.role))) {
                throw new IllegalArgumentException("--role server|client, got " + o.role);
            }
            if (!List.of("engine", "rdma", "tcp").contains(String.valueOf(o.transport))) {
                throw new IllegalArgumentException("--transport engine|rdma|tcp, got " + o.transport);
            }
            int largest = Math.max(o.latSize, Arrays.stream(o.sizes).max().orElse(0));
            if (largest > RECEIVE_BUFFER - 64) {
                throw new IllegalArgumentException("payloads of at most " + (RECEIVE_BUFFER - 64) + " B, got " + largest);
            }
            return o;
        }

        PollerIdleStrategy idleStrategy() {
            return switch (idle) {
                case "busy" -> PollerIdleStrategy.busySpin();
                case "event" -> PollerIdleStrategy.eventDriven();
                default -> throw new IllegalArgumentException("--idle busy|event, got " + idle);
            };
        }

        RdmaServer rdmaServer() {
            return RdmaServer.create().host(host).port(port)
                    .option(RdmaOption.IDLE_STRATEGY, idleStrategy())
                    .option(RdmaOption.RECEIVE_BUFFER_SIZE, RECEIVE_BUFFER);
        }

        RdmaClient rdmaClient() {
            return RdmaClient.create().host(host).port(port)
                    .option(RdmaOption.IDLE_STRATEGY, idleStrategy())
                    .option(RdmaOption.RECEIVE_BUFFER_SIZE, RECEIVE_BUFFER)
                    .option(RdmaOption.CONNECT_TIMEOUT, CONNECT_TIMEOUT);
        }
    }

    public static void main(String[] args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (RuntimeException e) {
            System.err.println("RSocketVmBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        int status = 0;
        try {
            if (o.role.equals("server")) {
                String where = startServer(o).where;
                System.out.println("RSocketVmBench server (" + o.transport + "): listening on " + where + " pid "
                        + ProcessHandle.current().pid());
                System.out.flush();
                new CountDownLatch(1).await(); // until killed
            } else {
                runClient(o);
            }
        } catch (Throwable t) {
            System.err.println("RSocketVmBench: FAILED: " + t);
            t.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    // ------------------------------------------------------------------------------------------- server

    /** The payload every stream item is a slice of (never released: each item is a retained slice). */
    private static final ByteBuf ITEM = Unpooled.unreleasableBuffer(Unpooled.directBuffer(RECEIVE_BUFFER)
            .writeZero(RECEIVE_BUFFER));

    /** A started server: where it listens and how to stop it. */
    record Server(String where, int port, Runnable stop) {
    }

    /** Binds the server of {@code o.transport} and returns once it listens. */
    static Server startServer(Options o) {
        return switch (o.transport) {
            case "engine" -> {
                DisposableRdmaServer s = o.rdmaServer().handle(RSocketVmBench::serveEngine).bindNow(WAIT);
                yield new Server(s.host() + ":" + s.port(), s.port(), () -> s.disposeNow(WAIT));
            }
            case "rdma" -> rsocketServer(RdmaServerTransport.create(o.rdmaServer()), c -> c.address());
            default -> rsocketServer(TcpServerTransport.create(o.host, o.port), c -> c.address());
        };
    }

    private static <T extends Closeable> Server rsocketServer(ServerTransport<T> transport,
            Function<T, InetSocketAddress> address) {
        T s = RSocketServer.create((setup, peer) -> Mono.just(new Responder()))
                .payloadDecoder(PayloadDecoder.ZERO_COPY)
                .bind(transport).block(WAIT);
        if (s == null) {
            throw new IllegalStateException("RSocket bind gave no server");
        }
        InetSocketAddress a = address.apply(s);
        return new Server(a.getHostString() + ":" + a.getPort(), a.getPort(), () -> {
            s.dispose();
            s.onClose().onErrorResume(e -> Mono.empty()).block(WAIT);
        });
    }

    /** RSocket's side: echo for request-response; N items of the asked size for request-stream. */
    static final class Responder implements RSocket {
        @Override
        public Mono<Payload> requestResponse(Payload payload) {
            return Mono.just(payload);
        }

        @Override
        public Flux<Payload> requestStream(Payload payload) {
            ByteBuf d = payload.data();
            int n = d.getInt(d.readerIndex());
            int size = d.getInt(d.readerIndex() + 4);
            payload.release();
            return Flux.range(0, n).map(i -> ByteBufPayload.create(ITEM.retainedSlice(0, size)));
        }
    }

    /** The engine's side: the first message names what the connection is for. */
    static Publisher<Void> serveEngine(RdmaConnection c) {
        return c.receive().switchOnFirst((first, all) -> {
            if (!first.hasValue()) {
                return all.then();
            }
            RdmaMessage m = first.get();
            ByteBuffer cmd = m.data();
            byte kind = cmd.get(0);
            m.release();
            Flux<RdmaMessage> rest = all.skip(1);
            if (kind == CMD_ECHO) {
                return c.send(rest.map(r -> {
                    ByteBuffer copy = ByteBuffer.allocate(r.length());
                    copy.put(r.data()).flip();
                    r.release();
                    return copy;
                }));
            }
            // CMD_STREAM: every further message asks for {n, size}: n messages of size bytes, one send(Publisher).
            return c.send(rest.concatMap(r -> {
                int n = r.data().getInt(0);
                int size = r.data().getInt(4);
                r.release();
                ByteBuffer item = ByteBuffer.allocate(size);
                return Flux.range(0, n).map(i -> item);
            }));
        }).then();
    }

    // ------------------------------------------------------------------------------------------- client

    private static void result(String key, double value) {
        System.out.println("RESULT " + key + " " + String.format(Locale.ROOT, "%.3f", value));
        System.out.flush();
    }

    static void runClient(Options o) {
        System.out.println("RSocketVmBench: " + o.transport + ", java " + Runtime.version() + ", "
                + ManagementFactory.getRuntimeMXBean().getInputArguments() + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs; idle " + o.idle + ", server " + o.host + ":"
                + o.port);
        long t0 = System.nanoTime();
        if (o.transport.equals("engine")) {
            engineLatency(o);
            engineStreams(o);
        } else {
            ClientTransport t = o.transport.equals("rdma") ? RdmaClientTransport.create(o.rdmaClient())
                    : TcpClientTransport.create(o.host, o.port);
            RSocket rsocket = RSocketConnector.create().payloadDecoder(PayloadDecoder.ZERO_COPY).connect(t).block(WAIT);
            if (rsocket == null) {
                throw new IllegalStateException("no RSocket");
            }
            try {
                rsocketLatency(rsocket, o);
                for (int size : o.sizes) {
                    rsocketStream(rsocket, o.streamWarmup, size);
                    long ns = rsocketStream(rsocket, o.streamN, size);
                    streamResult(o, size, ns);
                }
            } finally {
                rsocket.dispose();
                rsocket.onClose().onErrorResume(e -> Mono.empty()).block(WAIT);
            }
        }
        System.out.printf(Locale.ROOT, "RSocketVmBench: done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    }

    private static void latencyResult(long[] rtt) {
        Arrays.sort(rtt);
        int n = rtt.length;
        result("rr_median_us", (n % 2 == 1 ? rtt[n / 2] : (rtt[n / 2 - 1] + rtt[n / 2]) / 2) / 1e3);
        result("rr_p99_us", rtt[Math.min(n - 1, (int) Math.ceil(n * 0.99) - 1)] / 1e3);
        result("rr_min_us", rtt[0] / 1e3);
    }

    private static void streamResult(Options o, int size, long ns) {
        double secs = ns / 1e9;
        result("stream_" + size + "_kpps", o.streamN / secs / 1e3);
        result("stream_" + size + "_MBps", (double) o.streamN * size / (1 << 20) / secs);
    }

    /** Request-response, each request issued from the callback of the previous response. */
    private static void rsocketLatency(RSocket rsocket, Options o) {
        int total = o.latWarmup + o.latN;
        long[] rtt = new long[o.latN];
        ByteBuf ping = Unpooled.unreleasableBuffer(Unpooled.directBuffer(o.latSize).writeZero(o.latSize));
        Sinks.Empty<Void> done = Sinks.empty();
        new Object() {
            int i;
            long sentAt;

            void next() {
                sentAt = System.nanoTime();
                rsocket.requestResponse(ByteBufPayload.create(ping.retainedSlice())).subscribe(p -> {
                    long now = System.nanoTime();
                    p.release();
                    if (i >= o.latWarmup) {
                        rtt[i - o.latWarmup] = now - sentAt;
                    }
                    if (++i < total) {
                        next();
                    } else {
                        done.tryEmitEmpty();
                    }
                }, done::tryEmitError);
            }
        }.next();
        done.asMono().block(WAIT);
        latencyResult(rtt);
    }

    /** One request-stream of n items of size bytes, all demanded; returns ns from the request to the last item. */
    private static long rsocketStream(RSocket rsocket, int n, int size) {
        ByteBuf request = Unpooled.buffer(8).writeInt(n).writeInt(size);
        long t0 = System.nanoTime();
        Long count = rsocket.requestStream(ByteBufPayload.create(request)).doOnNext(Payload::release).count()
                .block(WAIT);
        long ns = System.nanoTime() - t0;
        if (count == null || count != n) {
            throw new IllegalStateException("request-stream gave " + count + " of " + n + " items");
        }
        return ns;
    }

    private static void close(RdmaConnection c) {
        c.dispose();
        c.onDispose().block(WAIT);
    }

    /** The engine's ping-pong: each ping sent from the receive callback of the previous pong. */
    private static void engineLatency(Options o) {
        RdmaConnection c = o.rdmaClient().connectNow(WAIT);
        try {
            c.send(ByteBuffer.wrap(new byte[] {CMD_ECHO})).block(WAIT);
            int total = o.latWarmup + o.latN;
            long[] rtt = new long[o.latN];
            ByteBuffer ping = ByteBuffer.allocate(o.latSize);
            Sinks.Empty<Void> done = Sinks.empty();
            long[] sentAt = new long[1];
            int[] received = new int[1];
            var sub = c.receive().take(total).subscribe(m -> {
                long now = System.nanoTime();
                m.release();
                int i = received[0]++;
                if (i >= o.latWarmup) {
                    rtt[i - o.latWarmup] = now - sentAt[0];
                }
                if (i + 1 < total) {
                    sentAt[0] = System.nanoTime();
                    c.send(ping).subscribe(null, done::tryEmitError);
                }
            }, done::tryEmitError, done::tryEmitEmpty);
            sentAt[0] = System.nanoTime();
            c.send(ping).subscribe(null, done::tryEmitError);
            done.asMono().block(WAIT);
            sub.dispose();
            latencyResult(rtt);
        } finally {
            close(c);
        }
    }

    /** The engine's stream: per size a warm-up and a measured batch on one connection. */
    private static void engineStreams(Options o) {
        RdmaConnection c = o.rdmaClient().connectNow(WAIT);
        try {
            c.send(ByteBuffer.wrap(new byte[] {CMD_STREAM})).block(WAIT);
            Counter counter = new Counter();
            c.receive().subscribe(counter);
            for (int size : o.sizes) {
                engineStream(c, counter, o.streamWarmup, size);
                streamResult(o, size, engineStream(c, counter, o.streamN, size));
            }
            counter.dispose();
        } finally {
            close(c);
        }
    }

    private static long engineStream(RdmaConnection c, Counter counter, int n, int size) {
        Sinks.Empty<Void> done = counter.expect(n);
        long t0 = System.nanoTime();
        c.send(ByteBuffer.allocate(8).putInt(0, n).putInt(4, size)).subscribe(null, done::tryEmitError);
        done.asMono().block(WAIT);
        return System.nanoTime() - t0;
    }

    /** Counts received messages (releasing each) and signals when the expected number has arrived. */
    static final class Counter extends BaseSubscriber<RdmaMessage> {
        private volatile Sinks.Empty<Void> done;
        private volatile int left;

        /** Set before the request is sent, so the first item finds it. */
        Sinks.Empty<Void> expect(int n) {
            Sinks.Empty<Void> d = Sinks.empty();
            left = n;
            done = d;
            return d;
        }

        @Override
        protected void hookOnSubscribe(Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        protected void hookOnNext(RdmaMessage m) {
            m.release();
            int l = left - 1; // only the receive's thread writes it while a batch is under way
            left = l;
            if (l == 0) {
                done.tryEmitEmpty();
            }
        }

        @Override
        protected void hookOnError(Throwable t) {
            Sinks.Empty<Void> d = done;
            if (d != null) {
                d.tryEmitError(t);
            }
        }
    }
}
