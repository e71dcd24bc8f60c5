package io.reactiverdma.reactive.impl.bench;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The engine's side of {@code scripts/bench-vm}: the perftest counterparts, through the public API only.
 * <ul>
 *   <li>{@code lat}: 64-byte SEND/RECV ping-pong (like {@code ib_send_lat}): the client sends, the server's
 *       {@code receive()} echoes each message with {@code send(Publisher)}, the client's next ping is sent
 *       from its {@code receive()} callback. One-way latency = RTT / 2: median (perftest's t_typical), p99,
 *       min, average.</li>
 *   <li>{@code bw} at each {@code --bw-sizes} size: {@code client.write(local, serverRegion)} with at most
 *       {@code --window} WRITEs outstanding (perftest's tx-depth), {@code Flux.range().flatMap(write, window)}.
 *       MB/s with MB = 2^20 bytes as perftest reports it.</li>
 *   <li>{@code rate}: {@code client.send(Publisher)} of 64-byte messages; the server's {@code receive()}
 *       counts them and acknowledges the batch's last one. Rate = messages / (start .. ack at the client),
 *       and by the sender's own completion ({@code send(Publisher)} done) as perftest's client reports;
 *       and each process's CPU time per message over the measured batch.</li>
 * </ul>
 * Every connection tells the server what it is for in its first message (one command byte); a server can
 * run in another JVM ({@code --role server}, then {@code --role client}) or in this one (default
 * {@code --role both}: one JVM, a server and a client connection).
 *
 * <p>Options (defaults in brackets): {@code --role both|server|client} [both], {@code --host} [$RXE_IP],
 * {@code --port} [0: any, for both], {@code --tests lat,bw,rate} [all], {@code --lat-n} [1000],
 * {@code --lat-warmup} [3000], {@code --bw-sizes} [65536,1048576], {@code --bw-n} per size [1000,300],
 * {@code --bw-warmup} WRITEs, at most 128 MiB [2000], {@code --window} [128], {@code --rate-n} [5000],
 * {@code --rate-warmup} [5000], {@code --idle busy|event|backoff} [busy], {@code --cq shared|per-connection}
 * [shared], {@code --send-depth} [128], {@code --recv-depth} [64], {@code --rounds} [1].
 *
 * <p>Prints {@code RESULT <key> <value>} lines (for the script) and a readable summary.
 */
public final class EngineVmBench {
    static final byte CMD_ECHO = 'E';
    static final byte CMD_SINK = 'S';
    static final byte CMD_WRITE = 'W';
    static final byte DATA = 0;
    static final byte END_OF_BATCH = 1;
    static final Duration WAIT = Duration.ofMinutes(5);
    /** A cold JVM under emulation took more than the default 10 s to accept its first connection. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(60);

    private EngineVmBench() {
    }

    static final class Options {
        String role = "both";
        String host = System.getenv("RXE_IP");
        int port = 0;
        List<String> tests = List.of("lat", "bw", "rate");
        int latN = 1000;
        int latWarmup = 3000;
        int latSize = 64;
        int[] bwSizes = {65536, 1 << 20};
        int[] bwN = {1000, 300};
        int bwWarmup = 2000;
        int window = 128;
        int rateN = 5000;
        int rateWarmup = 5000;
        int rateSize = 64;
        int rounds = 1;
        String idle = "busy";
        String cq = "shared";
        int sendDepth = 128;
        int recvDepth = 64;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--role" -> o.role = args[++i];
                    case "--host" -> o.host = args[++i];
                    case "--port" -> o.port = Integer.parseInt(args[++i]);
                    case "--tests" -> o.tests = List.of(args[++i].split(","));
                    case "--lat-n" -> o.latN = Integer.parseInt(args[++i]);
                    case "--lat-warmup" -> o.latWarmup = Integer.parseInt(args[++i]);
                    case "--bw-sizes" -> o.bwSizes = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                    case "--bw-n" -> o.bwN = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
                    case "--bw-warmup" -> o.bwWarmup = Integer.parseInt(args[++i]);
                    case "--window" -> o.window = Integer.parseInt(args[++i]);
                    case "--rate-n" -> o.rateN = Integer.parseInt(args[++i]);
                    case "--rate-warmup" -> o.rateWarmup = Integer.parseInt(args[++i]);
                    case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
                    case "--idle" -> o.idle = args[++i];
                    case "--cq" -> o.cq = args[++i];
                    case "--send-depth" -> o.sendDepth = Integer.parseInt(args[++i]);
                    case "--recv-depth" -> o.recvDepth = Integer.parseInt(args[++i]);
                    default -> throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (o.host == null || o.host.isBlank()) {
                throw new IllegalArgumentException("no --host and RXE_IP is not set");
            }
            return o;
        }

        /** {@code event:N} is {@code eventDriven(N)}: N polls after work before the poller sleeps. */
        PollerIdleStrategy idleStrategy() {
            if (idle.startsWith("event:")) {
                return PollerIdleStrategy.eventDriven(Long.parseLong(idle.substring("event:".length())));
            }
            return switch (idle) {
                case "busy" -> PollerIdleStrategy.busySpin();
                case "event" -> PollerIdleStrategy.eventDriven();
                case "backoff" -> PollerIdleStrategy.backoff();
                default -> throw new IllegalArgumentException("--idle busy|event|event:N|backoff, got " + idle);
            };
        }

        CompletionQueueMode cqMode() {
            return switch (cq) {
                case "shared" -> CompletionQueueMode.SHARED;
                case "per-connection" -> CompletionQueueMode.PER_CONNECTION;
                default -> throw new IllegalArgumentException("--cq shared|per-connection, got " + cq);
            };
        }

        RdmaServer server() {
            return RdmaServer.create().host(host).port(port)
                    .option(RdmaOption.IDLE_STRATEGY, idleStrategy())
                    .option(RdmaOption.COMPLETION_QUEUE_MODE, cqMode())
                    .option(RdmaOption.SEND_QUEUE_DEPTH, sendDepth)
                    .option(RdmaOption.RECEIVE_QUEUE_DEPTH, recvDepth)
                    .handle(EngineVmBench::serve);
        }

        RdmaClient client(int serverPort) {
            return RdmaClient.create().host(host).port(serverPort)
                    .option(RdmaOption.IDLE_STRATEGY, idleStrategy())
                    .option(RdmaOption.COMPLETION_QUEUE_MODE, cqMode())
                    .option(RdmaOption.SEND_QUEUE_DEPTH, sendDepth)
                    .option(RdmaOption.RECEIVE_QUEUE_DEPTH, recvDepth)
                    .option(RdmaOption.CONNECT_TIMEOUT, CONNECT_TIMEOUT);
        }
    }

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = Options.parse(args);
        } catch (RuntimeException e) {
            System.err.println("EngineVmBench: " + e.getMessage());
            System.exit(2);
            return;
        }
        int status = 0;
        try {
            switch (o.role) {
                case "server" -> runServer(o);
                case "client" -> runClient(o, o.port);
                case "both" -> {
                    DisposableRdmaServer server = o.server().port(0).bindNow(WAIT);
                    try {
                        runClient(o, server.port());
                    } finally {
                        server.disposeNow(WAIT);
                    }
                }
                default -> throw new IllegalArgumentException("--role server|client|both, got " + o.role);
            }
        } catch (Throwable t) {
            System.err.println("EngineVmBench: FAILED: " + t);
            t.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.exit(status);
    }

    // ------------------------------------------------------------------------------------------- server

    private static void runServer(Options o) throws InterruptedException {
        DisposableRdmaServer server = o.server().bindNow(WAIT);
        System.out.println("EngineVmBench server: listening on " + server.host() + ":" + server.port()
                + " pid " + ProcessHandle.current().pid() + " (idle " + o.idleStrategy() + ", cq " + o.cqMode() + ")");
        System.out.flush();
        new CountDownLatch(1).await(); // until killed
    }

    /** One connection: its first message names what it is for. */
    static Publisher<Void> serve(RdmaConnection c) {
        return c.receive().switchOnFirst((first, all) -> {
            if (!first.hasValue()) {
                return all.then();
            }
            RdmaMessage m = first.get();
            ByteBuffer cmd = m.data();
            byte kind = cmd.get(0);
            int arg = m.length() >= 5 ? cmd.getInt(1) : 0;
            m.release();
            Flux<RdmaMessage> rest = all.skip(1);
            return switch (kind) {
                case CMD_ECHO -> c.send(rest.map(r -> {
                    ByteBuffer copy = ByteBuffer.allocate(r.length());
                    copy.put(r.data()).flip();
                    r.release();
                    return copy;
                }));
                case CMD_SINK -> sink(c, rest);
                case CMD_WRITE -> {
                    RegisteredBuffer target = c.memory().allocateRegistered(arg, RemoteAccess.WRITE);
                    yield c.send(ByteBuffer.wrap(target.remoteRegion().toBytes()))
                            .then(rest.doOnNext(RdmaMessage::release).then())
                            .doFinally(s -> target.release());
                }
                default -> Mono.error(new IllegalStateException("unknown command " + kind));
            };
        }).then();
    }

    /** Counts messages; after each END_OF_BATCH acknowledges with count and first-to-last receive time. */
    private static Mono<Void> sink(RdmaConnection c, Flux<RdmaMessage> rest) {
        long[] state = new long[4]; // count in batch, first arrival ns, process CPU ns and system CPU ns then
        return c.send(rest.handle((RdmaMessage r, reactor.core.publisher.SynchronousSink<ByteBuffer> out) -> {
            long now = System.nanoTime();
            if (state[0]++ == 0) {
                state[1] = now;
                state[2] = processCpuNanos();
                state[3] = processSystemCpuNanos();
            }
            byte flag = r.data().get(0);
            r.release();
            if (flag == END_OF_BATCH) {
                ByteBuffer ack = ByteBuffer.allocate(32).putLong(0, state[0]).putLong(8, now - state[1])
                        .putLong(16, processCpuNanos() - state[2]).putLong(24, processSystemCpuNanos() - state[3]);
                state[0] = 0;
                out.next(ack);
            }
        }));
    }

    /**
     * CPU time this process has used (all its threads, user and system), in ns: what the rate test divides
     * by its messages, beside perftest's processes' CPU time (from the shell's {@code times}).
     */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /**
     * System (kernel) CPU time this process has used, in ns: {@code stime} of {@code /proc/self/stat}, in
     * clock ticks of 10 ms (Linux's USER_HZ, 100); -1 where there is no such file.
     */
    static long processSystemCpuNanos() {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat"));
            // After the command name, which may hold spaces and parentheses: state, then 10 fields, utime, stime.
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            return Long.parseLong(f[12]) * 10_000_000L;
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    // ------------------------------------------------------------------------------------------- client

    private static void result(String key, double value) {
        String v = String.format(Locale.ROOT, "%.3f", value);
        System.out.println("RESULT " + key + " " + v);
        System.out.flush();
    }

    private static void runClient(Options o, int serverPort) {
        System.out.println("EngineVmBench: java " + Runtime.version() + ", "
                + ManagementFactory.getRuntimeMXBean().getInputArguments() + ", " + Runtime.getRuntime().availableProcessors()
                + " CPUs; idle " + o.idleStrategy() + ", cq " + o.cqMode() + ", send depth " + o.sendDepth
                + ", receive depth " + o.recvDepth + ", server " + o.host + ":" + serverPort + " (" + o.role + ")");
        RdmaClient client = o.client(serverPort);
        long t0 = System.nanoTime();
        for (int round = 1; round <= o.rounds; round++) {
            String suffix = o.rounds > 1 ? "." + round : "";
            if (o.tests.contains("lat")) {
                latency(client, o, round == 1 ? o.latWarmup : Math.min(o.latWarmup, 200), suffix);
            }
            if (o.tests.contains("bw")) {
                for (int k = 0; k < o.bwSizes.length; k++) {
                    int size = o.bwSizes[k];
                    int n = o.bwN[Math.min(k, o.bwN.length - 1)];
                    bandwidth(client, o, size, n, round == 1 ? o.bwWarmup : Math.min(o.bwWarmup, 64), suffix);
                }
            }
            if (o.tests.contains("rate")) {
                rate(client, o, round == 1 ? o.rateWarmup : Math.min(o.rateWarmup, 500), suffix);
            }
        }
        System.out.printf(Locale.ROOT, "EngineVmBench: done in %.1f s%n", (System.nanoTime() - t0) / 1e9);
    }

    private static ByteBuffer command(byte kind, int arg) {
        return ByteBuffer.allocate(5).put(0, kind).putInt(1, arg);
    }

    private static void close(RdmaConnection c) {
        c.dispose();
        c.onDispose().block(WAIT);
    }

    /** Ping-pong: each ping is sent from the callback that received the previous pong. */
    private static void latency(RdmaClient client, Options o, int warmup, String suffix) {
        RdmaConnection c = client.connectNow(WAIT);
        try {
            c.send(command(CMD_ECHO, 0)).block(WAIT);
            int total = warmup + o.latN;
            long[] rtt = new long[o.latN];
            ByteBuffer ping = ByteBuffer.allocate(o.latSize);
            Sinks.Empty<Void> done = Sinks.empty();
            long[] sentAt = new long[1];
            int[] received = new int[1];
            long[] warmupEnd = new long[1];
            Disposable sub = c.receive().take(total).subscribe(m -> {
                long now = System.nanoTime();
                m.release();
                int i = received[0]++;
                if (i >= warmup) {
                    rtt[i - warmup] = now - sentAt[0];
                } else if (i == warmup - 1) {
                    warmupEnd[0] = now;
                }
                if (i + 1 < total) {
                    sentAt[0] = System.nanoTime();
                    c.send(ping).subscribe(null, done::tryEmitError);
                }
            }, done::tryEmitError, done::tryEmitEmpty);
            long start = System.nanoTime();
            sentAt[0] = start;
            c.send(ping).subscribe(null, done::tryEmitError);
            done.asMono().block(WAIT);
            sub.dispose();
            long end = System.nanoTime();
            Arrays.sort(rtt);
            int n = rtt.length;
            double median = oneWayUs(n % 2 == 1 ? rtt[n / 2] : (rtt[n / 2 - 1] + rtt[n / 2]) / 2);
            double p99 = oneWayUs(rtt[Math.min(n - 1, (int) Math.ceil(n * 0.99) - 1)]);
            double avg = oneWayUs((long) Arrays.stream(rtt).average().orElse(0));
            result("lat_typical_us" + suffix, median);
            result("lat_p99_us" + suffix, p99);
            result("lat_min_us" + suffix, oneWayUs(rtt[0]));
            result("lat_avg_us" + suffix, avg);
            result("lat_max_us" + suffix, oneWayUs(rtt[n - 1]));
            if (warmup > 0) {
                System.out.printf(Locale.ROOT, "  latency: %d warm-up round trips in %.1f s, %d measured in %.1f s%n",
                        warmup, (warmupEnd[0] - start) / 1e9, n, (end - warmupEnd[0]) / 1e9);
            }
        } finally {
            close(c);
        }
    }

    private static double oneWayUs(long rttNs) {
        return rttNs / 2.0 / 1e3;
    }

    /** RDMA WRITEs of {@code size} bytes, at most {@code window} outstanding. */
    private static void bandwidth(RdmaClient client, Options o, int size, int n, int warmupOps, String suffix) {
        RdmaConnection c = client.connectNow(WAIT);
        RegisteredBuffer local = null;
        try {
            Sinks.One<RemoteRegion> region = Sinks.one();
            Disposable sub = c.receive().take(1).subscribe(m -> {
                region.tryEmitValue(RemoteRegion.fromBytes(m.toByteArray()));
                m.release();
            }, region::tryEmitError);
            c.send(command(CMD_WRITE, size)).block(WAIT);
            RemoteRegion remote = region.asMono().block(WAIT);
            sub.dispose();
            local = c.memory().allocate(size);
            ByteBuffer b = local.buffer();
            for (int i = 0; i < size; i++) {
                b.put(i, (byte) i);
            }
            // Warm-up: warmupOps WRITEs, at most 128 MiB of data (the code path does not depend on the size).
            int warm = (int) Math.min(warmupOps, (128L << 20) / size);
            long w0 = System.nanoTime();
            writes(c, local, remote, warm, o.window);
            long w1 = System.nanoTime();
            long t0 = System.nanoTime();
            writes(c, local, remote, n, o.window);
            long t1 = System.nanoTime();
            double secs = (t1 - t0) / 1e9;
            String key = "bw_" + label(size) + "_MBps" + suffix;
            result(key, (double) n * size / (1 << 20) / secs);
            System.out.printf(Locale.ROOT, "  write %s: %d warm-up in %.1f s, %d measured in %.2f s (window %d)%n",
                    label(size), warm, (w1 - w0) / 1e9, n, secs, o.window);
        } finally {
            if (local != null) {
                local.release();
            }
            close(c);
        }
    }

    private static void writes(RdmaConnection c, RegisteredBuffer local, RemoteRegion remote, int n, int window) {
        Flux.range(0, n).flatMap(i -> c.write(local, remote), window, 1).then().block(WAIT);
    }

    private static String label(int size) {
        return size % (1 << 20) == 0 ? size / (1 << 20) + "m" : size % 1024 == 0 ? size / 1024 + "k" : size + "b";
    }

    /** Message rate: batches of 64-byte sends through send(Publisher), counted by the server. */
    private static void rate(RdmaClient client, Options o, int warmup, String suffix) {
        RdmaConnection c = client.connectNow(WAIT);
        try {
            c.send(command(CMD_SINK, 0)).block(WAIT);
            // Acks: {messages counted, server's first-to-last ns, client's arrival time, server's process CPU
            // ns and system CPU ns for the batch}; taken on the callback (poller) thread, so the main thread's
            // wake-up is not in the measurement.
            BlockingQueue<long[]> acks = new LinkedBlockingQueue<>();
            Disposable sub = c.receive().subscribe(m -> {
                long now = System.nanoTime();
                ByteBuffer d = m.data();
                boolean cpu = m.length() >= 32;
                acks.add(new long[] {d.getLong(0), d.getLong(8), now, cpu ? d.getLong(16) : -1, cpu ? d.getLong(24) : -1});
                m.release();
            }, t -> acks.add(new long[] {-1, 0, 0, -1, -1}));
            long w0 = System.nanoTime();
            if (warmup > 0) {
                batch(c, warmup, o.rateSize, acks);
            }
            long w1 = System.nanoTime();
            long[] r = batch(c, o.rateN, o.rateSize, acks);
            sub.dispose();
            double ackSecs = r[0] / 1e9;
            double sentSecs = r[1] / 1e9;
            result("rate_kpps" + suffix, o.rateN / ackSecs / 1e3);
            result("rate_sender_kpps" + suffix, o.rateN / sentSecs / 1e3);
            result("rate_server_kpps" + suffix, (r[2] - 1) / (r[3] / 1e9) / 1e3);
            // Process CPU per message (all threads, user and system): the sender from its first send to the
            // ack, the receiver from its first message to the last (in one JVM, --role both, each counts both).
            result("rate_client_cpu_us" + suffix, r[4] / 1e3 / o.rateN);
            if (r[5] >= 0) {
                result("rate_client_sys_us" + suffix, r[5] / 1e3 / o.rateN);
            }
            if (r[6] >= 0) {
                result("rate_server_cpu_us" + suffix, r[6] / 1e3 / o.rateN);
            }
            if (r[7] >= 0) {
                result("rate_server_sys_us" + suffix, r[7] / 1e3 / o.rateN);
            }
            System.out.printf(Locale.ROOT, "  rate: %d warm-up in %.1f s, %d measured in %.2f s (sender done at %.2f s)%n",
                    warmup, (w1 - w0) / 1e9, o.rateN, ackSecs, sentSecs);
        } finally {
            close(c);
        }
    }

    /**
     * One batch; returns {ns until the ack, ns until send(Publisher) completed, server count, server ns, this
     * process's CPU ns until the ack and its system CPU ns, the server process's CPU ns and system CPU ns for
     * the batch (-1: not told or not known)}.
     */
    private static long[] batch(RdmaConnection c, int n, int size, BlockingQueue<long[]> acks) {
        ByteBuffer data = ByteBuffer.allocate(size).put(0, DATA);
        ByteBuffer end = ByteBuffer.allocate(size).put(0, END_OF_BATCH);
        long[] sentDone = new long[1];
        long cpu0 = processCpuNanos();
        long sys0 = processSystemCpuNanos();
        long t0 = System.nanoTime();
        Mono<Void> sent = c.send(Flux.range(0, n).map(i -> i == n - 1 ? end : data))
                .doOnSuccess(v -> sentDone[0] = System.nanoTime())
                .cache();
        sent.subscribe(null, t -> { });
        long[] ack;
        long cpu1;
        long sys1;
        try {
            ack = acks.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            cpu1 = processCpuNanos();
            sys1 = processSystemCpuNanos();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        sent.block(WAIT);
        if (ack == null || ack[0] != n) {
            throw new IllegalStateException("the server counted " + (ack == null ? "nothing (timeout)" : ack[0])
                    + " of " + n + " messages");
        }
        return new long[] {ack[2] - t0, sentDone[0] - t0, ack[0], ack[1], cpu1 - cpu0, sys0 < 0 ? -1 : sys1 - sys0,
                ack[3], ack[4]};
    }
}
