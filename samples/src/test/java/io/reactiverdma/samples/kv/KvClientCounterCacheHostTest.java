package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What HTTP clients of the gateway can make a key-value client cache (issue 24, review finding 5), on the real
 * engine (the loopback device) and a real key-value server: counter names cost nothing unless valid, and the
 * cache of their words is bounded. (These ran on a hand-written fake connection before.)
 */
class KvClientCounterCacheHostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    final LoopbackRdma rdma = LoopbackRdma.create();

    private KvServer server;
    private KvClient client;

    @BeforeEach
    void connect() {
        server = KvServer.bindNow(KvServerOptions.defaults(rdma.host()).withPort(0)
                .withCounterCount(KvClient.MAX_CACHED_COUNTERS + 200), WAIT, line -> { });
        client = KvClient.connect(RdmaClient.create().host(rdma.host()).port(server.address().getPort())).block(WAIT);
    }

    /** Before the fix of finding 5: each name, even one too long to ever reach the server, stayed cached. */
    @Test
    void invalidCounterNamesAreRefusedBeforeAnythingIsCachedOrSent() {
        for (int i = 0; i < 10_000; i++) {
            String name = "x".repeat(100) + i;
            KvException e = assertThrows(KvException.class, () -> client.increment(name, 1).block(WAIT));
            assertEquals(KvException.Reason.KEY_TOO_LONG, e.reason());
        }
        assertEquals(0, client.cachedCounterWords());
        assertEquals(0, server.metrics().counterLookups(), "counter lookups the server answered");
    }

    @Test
    void theCounterWordCacheIsBounded() {
        int names = KvClient.MAX_CACHED_COUNTERS + 100;
        Flux.range(0, names)
                .flatMap(i -> client.increment("c" + i, 1).onErrorResume(e -> Mono.empty()), 64)
                .then()
                .block(WAIT);
        assertTrue(client.cachedCounterWords() <= KvClient.MAX_CACHED_COUNTERS,
                "cached " + client.cachedCounterWords());
        assertEquals(names, server.metrics().counterLookups(), "each name looked up once");
        assertEquals(1L, server.counterValue("c" + (names - 1)));
    }
}
