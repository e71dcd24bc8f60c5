package io.reactiverdma.samples.kv;

import io.reactiverdma.samples.common.SampleMain;
import io.reactiverdma.samples.common.ServerRun;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.samples.common.DeviceAddress;
import io.reactiverdma.samples.echo.RoundTripStats;
import io.reactiverdma.samples.common.UsageException;
import reactor.core.publisher.Flux;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The key-value sample's command line (see {@link KvOptions#USAGE}):
 * <pre>
 *   kv demo                      server and clients in this JVM, on the local RDMA device's address
 *   kv server [--port P]         a key-value server, until Ctrl-C
 *   kv client HOST get KEY ...   one command against a server elsewhere
 * </pre>
 * Exits 0 when everything was verified, 1 on any failure (the error is printed), 2 on a bad command line.
 */
public final class KeyValue {
    private KeyValue() {
    }

    public static void main(String[] args) {
        SampleMain.exit(run(args, System.out, System.err));
    }

    /** Runs the command line {@code args}; returns the exit status. */
    static int run(String[] args, PrintStream out, PrintStream err) {
        return SampleMain.run("kv", KvOptions.USAGE, args, err, KvOptions::parse, List.of(RdmaException.class, KvException.class, DemoFailure.class),
                options -> {
                    switch (options.mode()) {
                        case HELP -> out.println(KvOptions.USAGE);
                        case DEMO -> demo(options, out);
                        case SERVER -> {
                            return server(options, out, err);
                        }
                        case CLIENT -> client(options, out);
                    }
                    return 0;
                });
    }

    /** The demo saw something other than what it stored. */
    static final class DemoFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        DemoFailure(String message) {
            super(message);
        }
    }

    private static KvServer startServer(KvOptions o, PrintStream out, String who) {
        String host = DeviceAddress.hostOrFind(o.host(), prefixed(out, who));
        KvServerOptions so = KvServerOptions.defaults(host).withPort(o.port())
                .withTable(o.slots(), Math.min(KvServerOptions.DEFAULT_MAX_PROBE, o.slots()))
                .withLimits(o.limits());
        KvServer server = KvServer.bindNow(so, o.timeout(), prefixed(out, "kv server"));
        out.println("kv server: listening on " + server.address().getHostString() + ":" + server.address().getPort()
                + ": " + so.slotCount() + " slots of " + so.slotSize() + " B (keys up to " + so.keyMaxBytes()
                + " B, values up to " + (so.slotSize() - SlotCodec.HEADER_BYTES - so.keyMaxBytes())
                + " B inline), values up to " + so.maxValueBytes() + " B in a " + (so.valueAreaBytes() >> 20)
                + " MiB value area, " + so.counterCount() + " counters");
        return server;
    }

    private static KvClient connect(String host, int port, KvOptions o) {
        return KvClient.connect(RdmaClient.create().host(host).port(port)
                .option(RdmaOption.CONNECT_TIMEOUT, o.timeout())).block(o.timeout().plusSeconds(5));
    }

    private static void demo(KvOptions o, PrintStream out) {
        KvServer server = startServer(o, out, "kv demo");
        List<KvClient> clients = new ArrayList<>();
        try {
            String host = server.address().getHostString();
            int port = server.address().getPort();
            long t0 = System.nanoTime();
            KvClient c = connect(host, port, o);
            clients.add(c);
            out.println("kv client: connected in " + ms(System.nanoTime() - t0) + ", table "
                    + c.layout().table() + ", counters " + c.layout().counters());
            putGetDelete(c, o, out);
            streamLarge(c, o, out);
            timedGets(c, server, o, out);
            for (int i = 1; i < o.clients(); i++) {
                clients.add(connect(host, port, o));
            }
            counters(clients, server, o, out);
            KvServer.Metrics m = server.metrics();
            out.println("kv server: " + m.requestsHandled() + " requests handled (" + m.puts() + " PUTs, of them "
                    + m.remotePuts() + " read from the client; " + m.deletes() + " DELETEs; " + m.counterLookups()
                    + " counter lookups), " + m.liveEntries() + " live entries, " + m.valueBytesInUse()
                    + " value-area bytes in use; every GET and increment was one-sided");
        } finally {
            clients.forEach(KvClient::dispose);
            clients.forEach(c -> c.onDispose().block(Duration.ofSeconds(30)));
            server.disposeNow(Duration.ofSeconds(30));
        }
    }

    private static void putGetDelete(KvClient c, KvOptions o, PrintStream out) {
        byte[] greeting = "hello over RDMA".getBytes(StandardCharsets.UTF_8);
        c.put("greeting", greeting).block(o.timeout());
        byte[] got = c.get("greeting").block(o.timeout());
        expect(Arrays.equals(greeting, got), "get(greeting) returned " + text(got));
        out.println("kv client: put greeting = \"" + text(greeting) + "\"; get (one RDMA READ) -> \"" + text(got)
                + "\"");
        boolean removed = Boolean.TRUE.equals(c.delete("greeting").block(o.timeout()));
        byte[] after = c.get("greeting").block(o.timeout());
        expect(removed && after == null, "delete returned " + removed + ", then get returned " + text(after));
        out.println("kv client: delete greeting -> " + removed + "; get -> absent");
    }

    private static void streamLarge(KvClient c, KvOptions o, PrintStream out) {
        byte[] value = new byte[o.largeKb() << 10];
        new Random(42).nextBytes(value);
        long t0 = System.nanoTime();
        c.put("large", value).block(o.timeout());
        long putNs = System.nanoTime() - t0;
        int chunk = 256 << 10;
        MessageDigest digest = sha256();
        long[] chunks = new long[1];
        t0 = System.nanoTime();
        c.download("large", chunk)
                .doOnNext(b -> {
                    digest.update(b);
                    chunks[0]++;
                })
                .blockLast(o.timeout());
        long downloadNs = System.nanoTime() - t0;
        boolean same = MessageDigest.isEqual(digest.digest(), sha256().digest(value));
        expect(same, "the downloaded value differs from the one stored");
        out.printf(Locale.ROOT, "kv client: put %d KiB (the server RDMA READ it) in %s; download in %d chunks of %d KiB"
                        + " (RDMA READs, %d in flight) in %s = %.1f MiB/s; SHA-256 matches%n",
                o.largeKb(), ms(putNs), chunks[0], chunk >> 10, KvClient.DOWNLOAD_READS_IN_FLIGHT, ms(downloadNs),
                value.length / 1048576.0 / (downloadNs / 1e9));
    }

    private static void timedGets(KvClient c, KvServer server, KvOptions o, PrintStream out) {
        c.put("small", "v".repeat(100).getBytes(StandardCharsets.UTF_8)).block(o.timeout());
        long requests = server.metrics().requestsHandled();
        RoundTripStats stats = new RoundTripStats(o.gets());
        for (int i = 0; i < o.gets(); i++) {
            long t0 = System.nanoTime();
            byte[] v = c.get("small").block(o.timeout());
            stats.record(System.nanoTime() - t0);
            expect(v != null && v.length == 100, "get(small) returned " + text(v));
        }
        long handled = server.metrics().requestsHandled() - requests;
        expect(handled == 0, "the server handled " + handled + " requests during GETs");
        out.println("kv client: " + o.gets() + " GETs of a 100-byte value, one at a time: " + stats.summary()
                .replace("round trips", "GETs"));
        out.println("kv server: requests handled during those GETs: 0 (its CPU was not involved); torn slot reads"
                + " retried so far: " + c.tornSlotReads());
    }

    private static void counters(List<KvClient> clients, KvServer server, KvOptions o, PrintStream out) {
        long expected = (long) clients.size() * o.increments();
        long t0 = System.nanoTime();
        List<Long> previous = Flux.fromIterable(clients)
                .flatMap(c -> Flux.range(0, o.increments()).flatMap(i -> c.increment("visits", 1), 16))
                .collectList()
                .block(o.timeout().multipliedBy(4));
        long ns = System.nanoTime() - t0;
        long distinct = new HashSet<>(previous).size();
        Long now = server.counterValue("visits");
        expect(distinct == expected && now != null && now == expected, "counter 'visits' is " + now + " after "
                + expected + " increments (" + distinct + " distinct previous values)");
        out.printf(Locale.ROOT, "kv clients: %d clients x %d concurrent increments (remote fetch-and-add) in %s:"
                        + " counter = %d, every previous value distinct%n",
                clients.size(), o.increments(), ms(ns), now);
    }

    /** Until Ctrl-C (0), or until the server closed itself (1). */
    private static int server(KvOptions o, PrintStream out, PrintStream err) {
        KvServer server = startServer(o, out, "kv server");
        out.println("kv server: " + o.limits().describe() + "; Ctrl-C stops it");
        return ServerRun.untilStopped("kv server", server.onDispose(), () -> server.disposeNow(Duration.ofSeconds(30)),
                () -> out.println("kv server: stopped: " + server.metrics()), err);
    }

    private static void client(KvOptions o, PrintStream out) {
        KvClient c = connect(o.host(), o.port(), o);
        try {
            List<String> cmd = o.command();
            String key = cmd.get(1);
            long t0 = System.nanoTime();
            String result = switch (cmd.get(0)) {
                case "put" -> {
                    c.put(key, cmd.get(2).getBytes(StandardCharsets.UTF_8)).block(o.timeout());
                    yield "stored";
                }
                case "get" -> {
                    byte[] v = c.get(key).block(o.timeout());
                    yield v == null ? "absent" : v.length + " bytes: " + text(v);
                }
                case "delete" -> Boolean.TRUE.equals(c.delete(key).block(o.timeout())) ? "removed" : "absent";
                case "incr" -> {
                    long delta = cmd.size() > 2 ? Long.parseLong(cmd.get(2)) : 1;
                    yield "was " + c.increment(key, delta).block(o.timeout()) + ", added " + delta;
                }
                case "download" -> {
                    int chunk = cmd.size() > 2 ? Integer.parseInt(cmd.get(2)) : 256 << 10; // checked by KvOptions
                    MessageDigest digest = sha256();
                    long n = c.download(key, chunk).doOnNext(digest::update).count().block(o.timeout());
                    yield n + " chunks, SHA-256 " + HexFormat.of().formatHex(digest.digest());
                }
                default -> throw new UsageException("unknown command " + cmd.get(0));
            };
            out.println("kv client: " + String.join(" ", cmd.subList(0, Math.min(2, cmd.size()))) + ": " + result
                    + " (" + ms(System.nanoTime() - t0) + ")");
        } finally {
            c.dispose();
            c.onDispose().block(Duration.ofSeconds(30));
        }
    }

    private static void expect(boolean ok, String otherwise) {
        if (!ok) {
            throw new DemoFailure(otherwise);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static String text(byte[] b) {
        if (b == null) {
            return "(absent)";
        }
        String s = new String(b, 0, Math.min(b.length, 60), StandardCharsets.UTF_8);
        return b.length > 60 ? s + "..." : s;
    }

    private static String ms(long ns) {
        return String.format(Locale.ROOT, "%.1f ms", ns / 1e6);
    }

    private static Consumer<String> prefixed(PrintStream out, String who) {
        return line -> out.println(who + ": " + line);
    }
}
