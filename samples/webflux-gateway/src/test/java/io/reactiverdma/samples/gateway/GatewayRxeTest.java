package io.reactiverdma.samples.gateway;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import io.reactiverdma.samples.kv.KvServer;
import io.reactiverdma.samples.kv.KvServerOptions;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The gateway end to end on a real RDMA device (rxe in the VM): a key-value server on the device's address,
 * the gateway application (all its auto-configuration, the RDMA client from properties only) on a random
 * HTTP port, and real HTTP requests through Reactor Netty to the gateway, over RDMA to the server and back.
 * One application for the class (a Spring start is slow under emulation); the last test closes it.
 */
@Tag(RxeTestSupport.TAG)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GatewayRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Consumer<String> LOG = line -> System.out.println("  kv server: " + line);

    private KvServer kv;
    private ConfigurableApplicationContext app;
    private WebTestClient http;

    @BeforeAll
    void start() {
        RxeTestSupport.requireDevice();
        String host = RxeTestSupport.deviceAddress();
        kv = KvServer.bindNow(KvServerOptions.defaults(host).withPort(0), WAIT, LOG);
        long t0 = System.nanoTime();
        // A 60 s connect limit: under emulation a cold first connection (both JVMs still interpreting) can
        // take longer than the default 10 s.
        app = new SpringApplicationBuilder(GatewayApplication.class).run("--server.port=0",
                "--reactive-rdma.client.host=" + host, "--reactive-rdma.client.port=" + kv.address().getPort(),
                "--reactive-rdma.client.connect-timeout=60s", "--gateway.request-timeout=90s", "--management.endpoint.health.show-details=always");
        System.out.println("  gateway started in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        http = WebTestClient.bindToServer()
                .baseUrl("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port"))
                .responseTimeout(WAIT)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(8 << 20))
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
    }

    @Test
    @Order(1)
    void putThenGetReturnsTheSameBytesAndAnAbsentKeyIs404() {
        byte[] value = "hello over RDMA".getBytes(StandardCharsets.UTF_8);
        http.put().uri("/kv/greeting").contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(value)
                .exchange().expectStatus().isNoContent();
        byte[] got = http.get().uri("/kv/greeting").exchange()
                .expectStatus().isOk()
                .expectHeader().contentType(MediaType.APPLICATION_OCTET_STREAM)
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertArrayEquals(value, got);

        http.get().uri("/kv/never-stored").exchange()
                .expectStatus().isNotFound()
                .expectBody().jsonPath("$.detail").isEqualTo("no value for key 'never-stored'");
    }

    @Test
    @Order(2)
    void deleteRemovesTheValueAndASecondDeleteIs404() {
        http.put().uri("/kv/doomed").bodyValue(new byte[] {1, 2, 3}).exchange().expectStatus().isNoContent();
        http.delete().uri("/kv/doomed").exchange().expectStatus().isNoContent();
        http.get().uri("/kv/doomed").exchange().expectStatus().isNotFound();
        http.delete().uri("/kv/doomed").exchange().expectStatus().isNotFound();
    }

    @Test
    @Order(3)
    void counterIncrementsAreRemoteAtomicsAndTheServerSeesTheSum() {
        http.post().uri("/counters/visits/increment").exchange().expectStatus().isOk()
                .expectBody().json("{\"counter\":\"visits\",\"previous\":0,\"current\":1}");
        http.post().uri("/counters/visits/increment?delta=10").exchange().expectStatus().isOk()
                .expectBody().json("{\"counter\":\"visits\",\"previous\":1,\"current\":11}");
        assertEquals(11L, kv.counterValue("visits"), "the server's counter word");
    }

    @Test
    @Order(4)
    void aMultiMebibyteValueStreamsBackByteForByte() {
        byte[] value = new byte[3 << 20];
        new Random(7).nextBytes(value);
        http.put().uri("/kv/big").bodyValue(value).exchange().expectStatus().isNoContent();
        byte[] streamed = http.get().uri("/kv/big/stream").exchange()
                .expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertEquals(value.length, streamed == null ? -1 : streamed.length);
        assertArrayEquals(value, streamed);

        http.get().uri("/kv/not-there/stream").exchange().expectStatus().isNotFound()
                .expectBody().jsonPath("$.reason").isEqualTo("NOT_FOUND");
    }

    @Test
    @Order(5)
    void aValueLargerThanTheGatewayTakesIs413() {
        http.put().uri("/kv/huge").bodyValue(new byte[(4 << 20) + 1]).exchange()
                .expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.detail").value(d -> assertTrue(d.toString().contains("gateway.max-value-size"), d.toString()));
    }

    @Test
    @Order(6)
    void actuatorShowsTheEngineMetersTheHttpMetersAndAHealthyConnection() {
        byte[] body = http.get().uri("/actuator/metrics/rdma.operations").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.name").isEqualTo("rdma.operations")
                .jsonPath("$.measurements[0].value").value(v -> assertTrue(((Number) v).doubleValue() > 0,
                        "work requests completed: " + v))
                .returnResult().getResponseBody();
        String operations = body == null ? "" : new String(body, StandardCharsets.UTF_8);
        System.out.println("  /actuator/metrics/rdma.operations: " + operations);
        assertTrue(operations.contains("\"read\"") && operations.contains("\"send\""), operations);
        http.get().uri("/actuator/metrics/rdma.bytes?tag=op:read").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.measurements[0].value").value(v ->
                        assertTrue(((Number) v).doubleValue() >= 3 << 20, "bytes READ: " + v));
        http.get().uri("/actuator/metrics/http.server.requests").exchange().expectStatus().isOk();
        String prometheus = http.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertTrue(prometheus != null && prometheus.contains("rdma_operations_total"), "prometheus scrape has the engine's meters");
        http.get().uri("/actuator/health").exchange().expectStatus().isOk()
                .expectBody()
                .jsonPath("$.status").isEqualTo("UP")
                .jsonPath("$.components.kv.status").isEqualTo("UP")
                .jsonPath("$.components.rdma.status").isEqualTo("UP")
                .jsonPath("$.components.rdma.details.devices").value(d -> assertTrue(d.toString().contains("ACTIVE"),
                        "the device's port: " + d));
        // The application's registry has them, tagged with the device, through the recorder of that registry
        // (not the global one). Nothing about the global registry can be asserted here: Boot adds its registry
        // to the global composite, and when another test of this JVM made global rdma meters before, the
        // composite has a child meter in this registry with the same id, which the recorder then increments
        // (Micrometer returns the existing meter), and the composite reads. EngineMetricsHostTest,
        // RdmaAutoConfigurationTest and ObservationsRxeTest show the global registry untouched.
        http.get().uri("/actuator/metrics/rdma.connections").exchange().expectStatus().isOk()
                .expectBody().jsonPath("$.availableTags[?(@.tag == 'device')].values[0]")
                .value(v -> assertTrue(v.toString().contains("rxe"), "device tag: " + v));
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        assertTrue(registry != Metrics.globalRegistry);
        assertSame(MicrometerRdmaRecorder.of(registry),
                app.getBean(RdmaClient.class).configuration().metricsRecorder().get(), "the application's registry");
        // The connect was an observation: Boot's default handler turns it into a timer of the same name.
        assertTrue(app.getBean(RdmaClient.class).configuration().observer() instanceof MicrometerRdmaObserver);
        http.get().uri("/actuator/metrics/rdma.client.connect?tag=rdma.outcome:established").exchange()
                .expectStatus().isOk()
                .expectBody().jsonPath("$.measurements[0].value").value(v ->
                        assertTrue(((Number) v).doubleValue() >= 1, "established connects observed: " + v));
    }

    @Test
    @Order(100)
    void closingTheApplicationClosesTheRdmaConnection() {
        assertEquals(1, kv.metrics().connectionsOpen(), "the gateway's one connection");
        app.close();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (kv.metrics().connectionsOpen() > 0) {
            if (System.nanoTime() - deadline > 0) {
                fail("the key-value server still has " + kv.metrics().connectionsOpen() + " connection(s) after "
                        + WAIT + ": the gateway did not close its RDMA connection");
            }
            sleep(20);
        }
        assertEquals(1, kv.metrics().connectionsOpened(), "one connection for the whole test: no reconnect");
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
    }
}
