package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.samples.kv.KvException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The HTTP layer on the host, with a STUBBED key-value store (an in-memory map, no RDMA): routes, status
 * codes, error mapping and streaming back-pressure over real HTTP. The RDMA path itself is
 * {@link GatewayRxeTest}'s.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class KvControllerWithStubbedStoreTest {
    private static final int CHUNK = 64 * 1024;
    private static final int STREAM_CHUNKS = 1024; // 64 MiB: far more than socket buffers and prefetch hold
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    private final StubStore store = new StubStore();
    private ConfigurableApplicationContext app;
    private WebTestClient http;
    private int port;

    @EnableAutoConfiguration
    @EnableConfigurationProperties(GatewayProperties.class)
    @Import({KvController.class, GatewayErrors.class})
    static class StubbedGateway {
        static StubStore store;

        @Bean
        KeyValueStore keyValueStore() {
            return store;
        }
    }

    @BeforeAll
    void start() {
        StubbedGateway.store = store;
        app = new SpringApplicationBuilder(StubbedGateway.class).run("--server.port=0", "--spring.main.banner-mode=off",
                "--gateway.max-value-size=1KB", "--gateway.download-chunk-size=" + CHUNK + "B",
                "--gateway.request-timeout=" + REQUEST_TIMEOUT.toMillis() + "ms");
        port = Integer.parseInt(app.getEnvironment().getProperty("local.server.port"));
        http = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + port).responseTimeout(Duration.ofSeconds(30))
                .build();
    }

    @AfterAll
    void stop() {
        app.close();
    }

    @BeforeEach
    void reset() {
        store.values.clear();
        store.failure = null;
    }

    @Test
    void putGetDeleteAndCounter() {
        http.put().uri("/kv/a").bodyValue(new byte[] {1, 2, 3}).exchange().expectStatus().isNoContent();
        assertArrayEquals(new byte[] {1, 2, 3}, http.get().uri("/kv/a").exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody());
        http.delete().uri("/kv/a").exchange().expectStatus().isNoContent();
        http.get().uri("/kv/a").exchange().expectStatus().isNotFound()
                .expectHeader().contentType("application/problem+json")
                .expectBody().jsonPath("$.detail").isEqualTo("no value for key 'a'");
        http.delete().uri("/kv/a").exchange().expectStatus().isNotFound();
        http.post().uri("/counters/c/increment?delta=5").exchange().expectStatus().isOk()
                .expectBody().json("{\"counter\":\"c\",\"previous\":0,\"current\":5}");
    }

    @Test
    void aBodyOverTheLimitIs413WithoutReachingTheStore() {
        http.put().uri("/kv/big").bodyValue(new byte[1025]).exchange().expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.detail").isEqualTo("the value (1025 bytes) is larger than gateway.max-value-size (1024 bytes)");
        // Chunked (no Content-Length): refused while reading.
        http.put().uri("/kv/big").body(Flux.just(new byte[600], new byte[600]), byte[].class).exchange()
                .expectStatus().isEqualTo(413);
        assertTrue(store.values.isEmpty());
    }

    @ParameterizedTest
    @EnumSource(KvException.Reason.class)
    void everyKeyValueFailureHasItsStatusAndReason(KvException.Reason reason) {
        store.failure = new KvException(reason, "stub failure " + reason);
        int expected = switch (reason) {
            case NOT_FOUND -> 404;
            case KEY_TOO_LONG, ILLEGAL_ARGUMENT -> 400;
            case VALUE_TOO_LARGE -> 413;
            case TABLE_FULL, VALUE_AREA_FULL, COUNTERS_FULL -> 507;
            case CONCURRENT_MODIFICATION -> 409;
            case PROTOCOL, SERVER_ERROR -> 502;
            case BUSY -> 503;
        };
        http.get().uri("/kv/x").exchange().expectStatus().isEqualTo(expected)
                .expectBody().jsonPath("$.reason").isEqualTo(reason.name())
                .jsonPath("$.detail").isEqualTo("stub failure " + reason);
    }

    @Test
    void connectionFailuresAre503CompletionErrors502AndTimeouts504() {
        store.failure = new GatewayUnavailableException("cannot connect to the key-value server at h:1: refused");
        http.get().uri("/kv/x").exchange().expectStatus().isEqualTo(503)
                .expectBody().jsonPath("$.detail").isEqualTo("cannot connect to the key-value server at h:1: refused");
        store.failure = new ConnectionClosedException("the connection closed");
        http.get().uri("/kv/x").exchange().expectStatus().isEqualTo(503);
        store.failure = new RdmaCompletionException(io.reactiverdma.reactive.OperationType.READ, 10, "IBV_WC_REM_ACCESS_ERR", 0, "stub");
        http.get().uri("/kv/x").exchange().expectStatus().isEqualTo(502);
        store.failure = new TimeoutException();
        http.get().uri("/kv/x").exchange().expectStatus().isEqualTo(504);
    }

    @Test
    void aStreamedDownloadArrivesWholeAndAStalledReaderStallsTheReads() throws Exception {
        store.streamed.set(0);
        try (Socket s = new Socket("127.0.0.1", port)) {
            OutputStream out = s.getOutputStream();
            out.write(("GET /kv/big/stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[64 * 1024];
            long read = 0;
            while (read < (1 << 20)) {
                read += in.read(buf);
            }
            // Stop reading: the socket buffers fill, Netty stops asking, the store stops being read.
            long before = waitUntilStable();
            assertTrue(before < STREAM_CHUNKS / 2, "a stalled HTTP client stalls the reads: " + before + " of "
                    + STREAM_CHUNKS + " chunks read");
            // Longer than gateway.request-timeout: a reader that asks for nothing is not cut off.
            Thread.sleep(REQUEST_TIMEOUT.multipliedBy(2).toMillis());
            long total = read;
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
            }
            assertEquals(STREAM_CHUNKS, store.streamed.get(), "all chunks read once the client reads again");
            // Chunked transfer encoding adds framing: the payload is at least the value.
            assertTrue(total > (long) STREAM_CHUNKS * CHUNK, "received " + total);
        }
    }

    /**
     * Every chunk the response asked for has the request timeout, not only the first. Before: the download
     * had a timeout on its first chunk only (in KvGateway, not on the route), so a backend that stalls after
     * it held the response open: the read below failed with "Read timed out" after 60 s.
     */
    @Test
    void aDownloadWhoseBackendStallsAfterTheFirstChunkEndsWithinTheRequestTimeout() throws Exception {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(60_000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /kv/stall/stream HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[64 * 1024];
            long total = 0;
            for (int n; (n = in.read(buf)) >= 0; ) {
                total += n;
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(total >= CHUNK && total < 2L * CHUNK, "the first chunk and no more: " + total + " bytes");
            assertTrue(ms >= REQUEST_TIMEOUT.toMillis() - 100 && ms < 30_000, "the response ended after " + ms + " ms");
        }
    }

    private long waitUntilStable() throws InterruptedException {
        long last = -1;
        long now = store.streamed.get();
        while (now != last) {
            Thread.sleep(500);
            last = now;
            now = store.streamed.get();
        }
        return now;
    }

    /** The stub: a map, a counter, a generated stream, and a failure to return instead when one is set. */
    static final class StubStore implements KeyValueStore {
        final Map<String, byte[]> values = new ConcurrentHashMap<>();
        final Map<String, Long> counters = new ConcurrentHashMap<>();
        final AtomicLong streamed = new AtomicLong();
        volatile Throwable failure;

        private <T> Mono<T> orFail(Mono<T> m) {
            Throwable f = failure;
            return f != null ? Mono.error(f) : m;
        }

        @Override
        public Mono<byte[]> get(String key) {
            return orFail(Mono.fromSupplier(() -> values.get(key)));
        }

        @Override
        public Mono<Void> put(String key, byte[] value) {
            return orFail(Mono.fromRunnable(() -> values.put(key, value)));
        }

        @Override
        public Mono<Boolean> delete(String key) {
            return orFail(Mono.fromSupplier(() -> values.remove(key) != null));
        }

        @Override
        public Mono<Long> increment(String counter, long delta) {
            return orFail(Mono.fromSupplier(() -> counters.merge(counter, delta, Long::sum) - delta));
        }

        @Override
        public Flux<ByteBuffer> download(String key, int chunkSizeBytes) {
            if (key.equals("stall")) { // a backend that answers the first READ and no other
                return Flux.concat(Flux.just(ByteBuffer.allocate(chunkSizeBytes)), Flux.never());
            }
            return Flux.range(0, STREAM_CHUNKS).map(i -> {
                streamed.incrementAndGet();
                return ByteBuffer.allocate(chunkSizeBytes);
            });
        }
    }
}
