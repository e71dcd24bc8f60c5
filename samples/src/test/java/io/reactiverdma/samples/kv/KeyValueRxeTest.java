package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The key-value sample on a real RDMA device (rxe in the VM): one server for the class, clients in the same
 * JVM, on the device's address.
 */
@Tag(RxeTestSupport.TAG)
class KeyValueRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Consumer<String> LOG = line -> System.out.println("  kv server: " + line);

    private static KvServer server;
    private static final List<KvClient> clients = new ArrayList<>();

    @BeforeAll
    static void startServer() {
        RxeTestSupport.requireDevice();
        server = KvServer.bindNow(KvServerOptions.defaults(RxeTestSupport.deviceAddress()), WAIT, LOG);
    }

    @AfterAll
    static void stop() {
        clients.forEach(KvClient::dispose);
        clients.forEach(c -> c.onDispose().block(WAIT));
        if (server != null) {
            server.disposeNow(WAIT);
        }
    }

    @BeforeEach
    void requireDevice() {
        RxeTestSupport.requireDevice();
    }

    private static KvClient connect() {
        return connect(true);
    }

    private static KvClient connect(boolean verifyReads) {
        return connect(server, verifyReads);
    }

    private static KvClient connect(KvServer to, boolean verifyReads) {
        RdmaClient rdma = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(to.address().getPort())
                .option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(30));
        KvClient c = KvClient.connect(rdma, verifyReads).block(WAIT);
        clients.add(c);
        return c;
    }

    private static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void putGetDeleteRoundTripsForInlineMessageAndRemoteValues() {
        KvClient c = connect();
        KvServer.Metrics before = server.metrics();
        byte[] small = "hello, rdma".getBytes();
        byte[] medium = random(3000, 1);       // out of line, but carried in the PUT message
        byte[] large = random(1 << 20, 2);     // the server RDMA READs it from the client
        c.put("rt:small", small).block(WAIT);
        c.put("rt:medium", medium).block(WAIT);
        c.put("rt:large", large).block(WAIT);
        c.put("rt:empty", new byte[0]).block(WAIT);
        assertArrayEquals(small, c.get("rt:small").block(WAIT));
        assertArrayEquals(medium, c.get("rt:medium").block(WAIT));
        assertArrayEquals(large, c.get("rt:large").block(WAIT));
        assertArrayEquals(new byte[0], c.get("rt:empty").block(WAIT));
        StepVerifier.create(c.get("rt:absent")).expectComplete().verify(WAIT);

        byte[] replaced = random(5000, 3);
        c.put("rt:small", replaced).block(WAIT); // inline -> out of line
        assertArrayEquals(replaced, c.get("rt:small").block(WAIT));
        c.put("rt:large", small).block(WAIT);    // out of line -> inline: the block is freed
        assertArrayEquals(small, c.get("rt:large").block(WAIT));

        assertEquals(Boolean.TRUE, c.delete("rt:small").block(WAIT));
        assertEquals(Boolean.FALSE, c.delete("rt:small").block(WAIT));
        StepVerifier.create(c.get("rt:small")).expectComplete().verify(WAIT);
        c.put("rt:small", small).block(WAIT);    // re-insert after delete (reuses the tombstone)
        assertArrayEquals(small, c.get("rt:small").block(WAIT));

        KvServer.Metrics after = server.metrics();
        assertEquals(7, after.puts() - before.puts());
        assertEquals(2, after.remotePuts() - before.remotePuts()); // rt:large, and rt:small's 5000 bytes
        assertEquals(2, after.deletes() - before.deletes());
    }

    @Test
    void aLargeValueDownloadedInChunksEqualsTheOriginal() {
        KvClient c = connect();
        byte[] value = random((3 << 20) + 17, 4);
        c.put("dl:large", value).block(WAIT);
        int chunk = 256 << 10;
        List<ByteBuffer> chunks = c.download("dl:large", chunk).collectList().block(WAIT);
        assertEquals(13, chunks.size());
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int i = 0; i < chunks.size(); i++) {
            ByteBuffer b = chunks.get(i);
            assertEquals(i < 12 ? chunk : 17, b.remaining(), "chunk " + i);
            all.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
        }
        assertArrayEquals(value, all.toByteArray());
        assertEquals(0, c.changedValueReads());
        // An inline value streams too; an absent one is NOT_FOUND.
        c.put("dl:small", "abcdefgh".getBytes()).block(WAIT);
        StepVerifier.create(c.download("dl:small", 3).map(b -> new String(b.array())))
                .expectNext("abc", "def", "gh").expectComplete().verify(WAIT);
        StepVerifier.create(c.download("dl:absent", 1024))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.NOT_FOUND)).verify(WAIT);
    }

    @Test
    void getsDoNotReachTheServersCpu() {
        KvClient c = connect();
        c.put("cpu:inline", "x".getBytes()).block(WAIT);
        c.put("cpu:block", random(100_000, 5)).block(WAIT);
        long requests = server.metrics().requestsHandled();
        int gets = 0;
        for (int i = 0; i < 50; i++) {
            assertEquals(1, c.get("cpu:inline").block(WAIT).length);
            assertEquals(100_000, c.get("cpu:block").block(WAIT).length);
            assertNull(c.get("cpu:absent-" + i).block(WAIT));
            gets += 3;
        }
        assertEquals(100_000, c.download("cpu:block", 10_000).count().block(WAIT) * 10_000);
        assertEquals(requests, server.metrics().requestsHandled(),
                gets + " GETs and a download must not be requests the server handles");
        // The control: one PUT is.
        c.put("cpu:inline", "y".getBytes()).block(WAIT);
        assertEquals(requests + 1, server.metrics().requestsHandled());
    }

    @Test
    void countersFromSeveralClientsSumExactly() {
        int clientCount = 3;
        int perClient = 100;
        long lookups = server.metrics().counterLookups();
        List<KvClient> cs = new ArrayList<>();
        for (int i = 0; i < clientCount; i++) {
            cs.add(connect());
        }
        List<Long> previous = Flux.fromIterable(cs)
                .flatMap(c -> Flux.range(0, perClient).flatMap(i -> c.increment("ctr:hits", 1), 16))
                .collectList()
                .block(WAIT);
        assertEquals(clientCount * perClient, previous.size());
        // Fetch-and-add hands each increment a distinct previous value: exactly 0 .. N-1.
        Set<Long> distinct = new HashSet<>(previous);
        assertEquals(clientCount * perClient, distinct.size());
        assertEquals(0L, distinct.stream().mapToLong(Long::longValue).min().orElseThrow());
        assertEquals(clientCount * perClient - 1L, distinct.stream().mapToLong(Long::longValue).max().orElseThrow());
        assertEquals(clientCount * perClient, server.counterValue("ctr:hits"));
        assertEquals(clientCount * perClient, cs.get(0).increment("ctr:hits", 0).block(WAIT));
        // One lookup per client; the increments themselves never reached the server.
        assertEquals(clientCount, server.metrics().counterLookups() - lookups);
        assertEquals(-5L, cs.get(1).increment("ctr:other", -5).then(cs.get(2).increment("ctr:other", 0)).block(WAIT));
    }

    @Test
    void aDownloadFailsWhenTheValueIsReplacedMidway() {
        KvClient c = connect();
        c.put("cm:value", random(2 << 20, 6)).block(WAIT);
        long replacedBefore = c.changedValueReads();
        StepVerifier.create(c.download("cm:value", 64 << 10), 1)
                .expectNextCount(1)
                .then(() -> c.put("cm:value", random(2 << 20, 7)).block(WAIT))
                .thenRequest(Long.MAX_VALUE)
                .thenConsumeWhile(b -> true)
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.CONCURRENT_MODIFICATION))
                .verify(WAIT);
        assertTrue(c.changedValueReads() > replacedBefore);
        // Deleting it midway is the same failure.
        StepVerifier.create(c.download("cm:value", 64 << 10), 1)
                .expectNextCount(1)
                .then(() -> c.delete("cm:value").block(WAIT))
                .thenRequest(Long.MAX_VALUE)
                .thenConsumeWhile(b -> true)
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.CONCURRENT_MODIFICATION))
                .verify(WAIT);
    }

    @Test
    void badInputIsATypedErrorAndNothingIsSent() {
        KvClient c = connect();
        long requests = server.metrics().requestsHandled();
        String longKey = "k".repeat(c.layout().keyMaxBytes() + 1);
        StepVerifier.create(c.put(longKey, new byte[1]))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.KEY_TOO_LONG)).verify(WAIT);
        StepVerifier.create(c.get(longKey))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.KEY_TOO_LONG)).verify(WAIT);
        StepVerifier.create(c.delete(""))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.KEY_TOO_LONG)).verify(WAIT);
        StepVerifier.create(c.increment(longKey, 1))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.KEY_TOO_LONG)).verify(WAIT);
        StepVerifier.create(c.put("bad:big", new byte[c.layout().maxValueBytes() + 1]))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.VALUE_TOO_LARGE)).verify(WAIT);
        StepVerifier.create(c.download("bad:any", 0))
                .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.ILLEGAL_ARGUMENT)).verify(WAIT);
        assertEquals(requests, server.metrics().requestsHandled(), "nothing reached the server");
        // The largest value is accepted.
        byte[] largest = random(c.layout().maxValueBytes(), 8);
        c.put("bad:largest", largest).block(WAIT);
        assertArrayEquals(largest, c.get("bad:largest").block(WAIT));
        assertTrue(c.delete("bad:largest").block(WAIT));
    }

    @Test
    void theTableIsRegisteredAtStartBeforeAnyConnection() {
        List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        KvServer fresh = KvServer.bindNow(KvServerOptions.defaults(RxeTestSupport.deviceAddress()).withPort(0)
                .withTable(16, 2).withValues(4096, 8192).withCounterCount(1), WAIT, lines::add);
        try {
            assertTrue(lines.get(0).startsWith("table registered"), lines.toString());
            assertEquals(0, fresh.metrics().connectionsOpened());
            RdmaClient rdma = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(fresh.address().getPort());
            KvClient c = KvClient.connect(rdma).block(WAIT);
            try {
                c.put("early", new byte[] {42}).block(WAIT);
                assertArrayEquals(new byte[] {42}, c.get("early").block(WAIT), "a one-sided READ of the table");
            } finally {
                c.dispose();
                c.onDispose().block(WAIT);
            }
        } finally {
            fresh.disposeNow(WAIT);
        }
    }

    @Test
    void aFullTableAndAFullValueAreaAreTypedErrors() {
        KvServer small = KvServer.bindNow(KvServerOptions.defaults(RxeTestSupport.deviceAddress())
                .withTable(8, 2).withValues(4000, 8192).withCounterCount(1), WAIT, LOG);
        try {
            RdmaClient rdma = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(small.address().getPort());
            KvClient c = KvClient.connect(rdma).block(WAIT);
            try {
                KvException full = null;
                for (int i = 0; i < 9 && full == null; i++) {
                    try {
                        c.put("full:" + i, new byte[1]).block(WAIT);
                    } catch (KvException e) {
                        full = e;
                    }
                }
                assertReason(full, KvException.Reason.TABLE_FULL);
                c.delete("full:0").block(WAIT);
                c.put("area:a", new byte[4000]).block(WAIT); // 4 KiB blocks (value and generation word): 2 fit
                c.put("area:b", new byte[4000]).block(WAIT);
                StepVerifier.create(c.put("area:a", new byte[3000])) // needs a third block before freeing one
                        .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.VALUE_AREA_FULL)).verify(WAIT);
                c.increment("one", 1).block(WAIT);
                StepVerifier.create(c.increment("two", 1))
                        .expectErrorSatisfies(e -> assertReason(e, KvException.Reason.COUNTERS_FULL)).verify(WAIT);
            } finally {
                c.dispose();
                c.onDispose().block(WAIT);
            }
        } finally {
            small.disposeNow(WAIT);
        }
    }

    /**
     * A writer replaces values that check themselves (every byte equal to the round number) while readers GET
     * them: with the checks, no reader ever gets an invalid value. The same load on a client without checks
     * shows what they prevent. Three cases: a value inline in its slot; a 64 KiB value in the value area
     * (the server READs it from the writer) with the default block reuse delay; the same with no delay, so
     * the server rewrites the block a reader may be reading one write later.
     */
    @Test
    void readersNeverSeeATornValueWhileAWriterReplacesIt() {
        KvServer churn = KvServer.bindNow(KvServerOptions.defaults(RxeTestSupport.deviceAddress())
                .withBlockReuseDelay(Duration.ZERO), WAIT, LOG);
        try {
            tornReadCase(server, 150, 300);
            tornReadCase(server, 64 << 10, 150);
            tornReadCase(churn, 64 << 10, 150);
        } finally {
            churn.disposeNow(WAIT);
        }
    }

    private static void tornReadCase(KvServer on, int size, int writes) {
        KvClient writer = connect(on, true);
        KvClient checked = connect(on, true);
        KvClient unchecked = connect(on, false);
        String key = "torn:" + size;
        writer.put(key, filled(size, 0)).block(WAIT);
        AtomicBoolean writing = new AtomicBoolean(true);
        Mono<Void> rounds = Flux.range(1, writes)
                .concatMap(i -> writer.put(key, filled(size, i)))
                .doFinally(s -> writing.set(false))
                .then();
        long[][] results = Mono.zip(rounds.thenReturn(0), reads(checked, key, size, writing),
                        reads(unchecked, key, size, writing))
                .map(t -> new long[][] {t.getT2(), t.getT3()})
                .block(Duration.ofMinutes(3));
        System.out.printf("  %d-byte values, %d writes, block reuse delay %d ms: checked reader %d GETs, %d invalid,"
                        + " %d gave up, %d torn slot reads and %d rewritten blocks read again;"
                        + " unchecked reader %d GETs, %d invalid%n",
                size, writes, on == server ? KvServerOptions.DEFAULT_BLOCK_REUSE_DELAY.toMillis() : 0,
                results[0][0], results[0][1], results[0][2], checked.tornSlotReads(), checked.changedValueReads(),
                results[1][0], results[1][1]);
        assertEquals(0, results[0][1], "the checked reader returned invalid values");
        assertTrue(results[0][0] > results[0][2], "the checked reader got values");
        assertTrue(results[1][0] > 0, "the unchecked reader read");
    }

    @Test
    void theDemoRunsAndVerifiesEverything() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int status = KeyValue.run(new String[] {"demo", "--clients", "2", "--increments", "20", "--gets", "50",
                        "--large-kb", "512"}, new java.io.PrintStream(out, true), new java.io.PrintStream(err, true));
        String text = out.toString();
        System.out.print(text);
        assertEquals(0, status, err.toString());
        assertTrue(text.contains("get (one RDMA READ) -> \"hello over RDMA\""), text);
        assertTrue(text.contains("SHA-256 matches"), text);
        assertTrue(text.contains("requests handled during those GETs: 0"), text);
        assertTrue(text.contains("counter = 40, every previous value distinct"), text);
    }

    /** GETs {@code key} until writing stops; emits {GETs, invalid values, gave up (CONCURRENT_MODIFICATION)}. */
    private static Mono<long[]> reads(KvClient c, String key, int size, AtomicBoolean writing) {
        long[] counts = new long[3];
        byte[] gaveUp = new byte[0];
        return Mono.defer(() -> c.get(key))
                .defaultIfEmpty(new byte[] {1}) // the key always has a value: absent is wrong too
                .onErrorResume(e -> e instanceof KvException k
                        && k.reason() == KvException.Reason.CONCURRENT_MODIFICATION, e -> Mono.just(gaveUp))
                .doOnNext(v -> {
                    counts[0]++;
                    if (v == gaveUp) {
                        counts[2]++;
                    } else if (!valid(v, size)) {
                        counts[1]++;
                    }
                })
                .repeat(writing::get)
                .then(Mono.fromSupplier(() -> counts));
    }

    private static byte[] filled(int size, int round) {
        byte[] b = new byte[size];
        Arrays.fill(b, (byte) round);
        return b;
    }

    private static boolean valid(byte[] v, int size) {
        if (v.length != size) {
            return false;
        }
        for (byte x : v) {
            if (x != v[0]) {
                return false;
            }
        }
        return true;
    }

    private static void assertReason(Throwable e, KvException.Reason reason) {
        assertTrue(e instanceof KvException, "a KvException, got " + e);
        assertEquals(reason, ((KvException) e).reason(), e.getMessage());
        System.out.println("  typed as expected: " + e);
    }
}
