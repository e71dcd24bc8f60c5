package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaResources;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.samples.kv.KvServer;
import io.reactiverdma.samples.kv.KvServerOptions;
import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.blockhound.BlockHound;
import reactor.blockhound.integration.BlockHoundIntegration;
import reactor.netty.resources.LoopResources;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.ServiceLoader;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/**
 * Which threads a PUT's slow work runs on (issue 24, review finding 1 and its BlockHound test): the gateway
 * on the real engine (the loopback device), a key-value server, real HTTP. BlockHound reports every call of
 * the marked methods on a thread that must not block: the Netty event loops and the engine's threads
 * (pollers, the rdma_cm loop), which are Reactor {@code NonBlocking} threads. Marked: registering the large
 * PUTs' staging buffers ({@code ibv_reg_mr}), deregistering them ({@code ibv_dereg_mr}), and copying a large
 * PUT's value into its staging buffer (up to 4 MiB). BlockHound's own list (sleeps,
 * socket and file I/O) is recorded too when it names a thread of the gateway's path.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayThreadsHostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** What a marked method was called from a non-blocking thread: method and thread. */
    private static final List<String> CALLS = new CopyOnWriteArrayList<>();
    private static final List<String> MARKED = List.of("PutStaging.registerOne", "PutStaging.deregister",
            "PutStaging.stage");

    private final LoopbackRdma rdma = LoopbackRdma.create();
    private KvServer kv;
    private ConfigurableApplicationContext app;
    private WebTestClient http;

    static {
        BlockHound.Builder b = BlockHound.builder();
        ServiceLoader.load(BlockHoundIntegration.class).forEach(b::with); // Reactor's, Netty's, Spring's
        // The gateway's registrations: its large PUTs' staging buffers (ibv_reg_mr), registered once and
        // released when the connection closes (ibv_dereg_mr). The engine's own classes and the loopback device
        // are not marked: BlockHound (1.0.16, JDK 17) reported no call of an instance method marked anywhere
        // (the engine's, the loopback device's, the sample's), even on an event loop; static ones it does.
        String staging = "io.reactiverdma.samples.kv.PutStaging";
        b.markAsBlocking(staging, "registerOne",
                        "(Lio/reactiverdma/reactive/RdmaMemory;I)Lio/reactiverdma/reactive/RegisteredBuffer;")
                .markAsBlocking(staging, "deregister", "(Ljava/util/List;)V")
                .markAsBlocking(staging, "stage",
                        "(Lio/reactiverdma/reactive/RegisteredBuffer;[B)V")
                // Recorded, not thrown: a throw would be swallowed or turned into a 500 somewhere on the path.
                .blockingMethodCallback(m -> {
                    String call = m.toString();
                    if (MARKED.stream().anyMatch(call::contains)) {
                        CALLS.add(call + " on " + Thread.currentThread().getName());
                    }
                })
                .install();
    }

    @BeforeAll
    void start() {
        rdma.start();
        kv = KvServer.bindNow(KvServerOptions.defaults(rdma.host()).withPort(0), WAIT, line -> { });
        app = new SpringApplicationBuilder(GatewayApplication.class).run("--server.port=0",
                "--spring.main.banner-mode=off", "--reactive-rdma.client.host=" + rdma.host(),
                "--reactive-rdma.client.port=" + kv.address().getPort(), "--reactive-rdma.client.connect-timeout=20s",
                "--gateway.request-timeout=30s");
        http = WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port"))
                .responseTimeout(WAIT)
                .build();
    }

    @AfterAll
    void stop() {
        if (app != null) {
            app.close();
        }
        if (kv != null) {
            kv.disposeNow(WAIT);
        }
        rdma.close();
    }

    /**
     * The detection itself works: registering staging buffers, staging a value and deregistering them, each
     * called on a Netty event loop of its own, are recorded.
     */
    @Test
    void registeringStagingAndDeregisteringOnAnEventLoopAreRecorded() throws Exception {
        CALLS.clear();
        RdmaMemory memory = RdmaResources.memory(rdma.host()).block(WAIT);
        Class<?> type = Class.forName("io.reactiverdma.samples.kv.PutStaging");
        Method register = type.getDeclaredMethod("registerOne", RdmaMemory.class, int.class);
        Method stage = type.getDeclaredMethod("stage", RegisteredBuffer.class, byte[].class);
        Method deregister = type.getDeclaredMethod("deregister", List.class);
        for (java.lang.reflect.AccessibleObject o : List.of(register, stage, deregister)) {
            o.setAccessible(true);
        }
        LoopResources loops = LoopResources.create("check", 1, true);
        try {
            loops.onServer(false).next().submit(() -> {
                RegisteredBuffer b = (RegisteredBuffer) register.invoke(null, memory, 1 << 16);
                stage.invoke(null, b, new byte[16]);
                deregister.invoke(null, List.of(b));
                return null;
            }).get(WAIT.toSeconds(), TimeUnit.SECONDS);
        } finally {
            loops.disposeLater().block(WAIT);
        }
        assertThat(CALLS).as("recorded").anyMatch(c -> c.contains("PutStaging.registerOne"))
                .anyMatch(c -> c.contains("PutStaging.stage"))
                .anyMatch(c -> c.contains("PutStaging.deregister"))
                .allMatch(c -> c.contains(" on check-"));
    }

    /**
     * Before: the staging copy ran on the event loop that completed the request body ("PutStaging.stage on
     * reactor-http-nio-4"). Registration was already off both threads (PutStaging registers on the bounded
     * elastic scheduler); its deregistration, when the connection closes, is not exercised here.
     */
    @Test
    void aLargePutNeitherRegistersNorCopiesOnTheEventLoopOrThePoller() {
        byte[] value = new byte[64 << 10];
        new Random(24).nextBytes(value);
        CALLS.clear();
        // The first large PUT registers the connection's staging buffers; the others reuse them.
        http.put().uri("/kv/first").bodyValue(new byte[8 << 10]).exchange().expectStatus().isNoContent();
        for (int i = 0; i < 3; i++) {
            http.put().uri("/kv/big").bodyValue(value).exchange().expectStatus().isNoContent();
        }
        byte[] got = http.get().uri("/kv/big").exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertArrayEquals(value, got);
        assertThat(CALLS).as("slow calls on a Netty event loop or an engine thread").isEmpty();
    }
}
