package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The rdma health indicator over a sysfs tree written by the test, and its auto-configuration. */
class RdmaHealthIndicatorTest {
    @TempDir
    Path sysfs;

    private void port(String device, String port, String state) throws IOException {
        Path dir = Files.createDirectories(sysfs.resolve(device).resolve("ports").resolve(port));
        Files.writeString(dir.resolve("state"), state + "\n");
    }

    @Test
    void upWithAnActivePortAndNoServer() throws IOException {
        port("rxe0", "1", "4: ACTIVE");
        port("mlx5_0", "1", "1: DOWN");
        Health h = new RdmaHealthIndicator(sysfs, Map.of()).health();
        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails().get("devices")).isEqualTo(Map.of("rxe0", Map.of("1", "ACTIVE"),
                "mlx5_0", Map.of("1", "DOWN")));
    }

    @Test
    void downWithoutAnActivePortOrWithoutDevicesWhenTheApplicationHasAServer() throws IOException {
        RdmaServerLifecycle listening = lifecycle(new FakeBoundServer(7001));
        listening.start();
        Health none = new RdmaHealthIndicator(sysfs.resolve("missing"), listening).health();
        assertThat(none.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) none.getDetails().get("reason")).startsWith("no RDMA device");
        port("rxe0", "1", "1: DOWN");
        Health down = new RdmaHealthIndicator(sysfs, listening).health();
        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
        assertThat(down.getDetails().get("reason")).isEqualTo("no RDMA device has an ACTIVE port");
    }

    @Test
    void downWhenTheConfiguredServerIsNotListening() throws IOException {
        port("rxe0", "1", "4: ACTIVE");
        RdmaServerLifecycle notStarted = new RdmaServerLifecycle(RdmaServer.create().host("10.77.0.1")
                .handle(c -> Mono.empty()), Duration.ofSeconds(1), Duration.ofSeconds(1));
        Health h = new RdmaHealthIndicator(sysfs, notStarted).health();
        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
        assertThat(h.getDetails().get("servers")).isEqualTo(Map.of("rdmaServer", "not listening"));
    }

    @Test
    void theIndicatorIsAutoConfiguredUnlessDisabled() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
                AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaHealthAutoConfiguration.class));
        runner.run(ctx -> assertThat(ctx).hasSingleBean(RdmaHealthIndicator.class));
        runner.withPropertyValues("management.health.rdma.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(RdmaHealthIndicator.class));
    }

    /**
     * An application with only the (always created) client bean may treat RDMA as optional: a host without an
     * ACTIVE port must not take it out of a load balancer (DOWN is HTTP 503 on /actuator/health).
     */
    @Test
    void aClientOnlyApplicationIsNotDownOnAHostWithoutAnActivePort() throws IOException {
        Health none = new RdmaHealthIndicator(sysfs.resolve("missing"), Map.of()).health();
        assertThat(none.getStatus()).isEqualTo(Status.UNKNOWN);
        assertThat((String) none.getDetails().get("reason")).startsWith("no RDMA device");
        port("rxe0", "1", "1: DOWN");
        assertThat(new RdmaHealthIndicator(sysfs, Map.of()).health().getStatus()).isEqualTo(Status.UNKNOWN);
    }

    /** Two server beans are the natural way to bind two servers: Actuator must not make that fail the start. */
    @Test
    void twoServerBeansAreEachReportedAndDoNotFailTheStart() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaHealthAutoConfiguration.class))
                .withBean("orders", RdmaServerLifecycle.class, () -> lifecycle(new FakeBoundServer(7001)))
                .withBean("prices", RdmaServerLifecycle.class, () -> lifecycle(new FakeBoundServer(7002)))
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    Health h = ctx.getBean(RdmaHealthIndicator.class).health();
                    @SuppressWarnings("unchecked")
                    Map<String, Object> servers = (Map<String, Object>) h.getDetails().get("servers");
                    assertThat(servers).containsOnlyKeys("orders", "prices");
                    assertThat(servers.get("prices").toString()).contains("10.77.0.1:7002");
                });
    }

    @Test
    void theHealthSwitchHasConfigurationMetadata() throws IOException {
        String json;
        try (java.io.InputStream in = new org.springframework.core.io.ClassPathResource(
                "META-INF/spring-configuration-metadata.json").getInputStream()) {
            json = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        assertThat(json).contains("\"name\": \"management.health.rdma.enabled\"");
    }

    private static RdmaServerLifecycle lifecycle(FakeBoundServer bound) {
        return new RdmaServerLifecycle(RdmaServer.create().host("10.77.0.1").handle(c -> Mono.empty()),
                timeout -> bound, Duration.ofSeconds(1), Duration.ZERO, Duration.ofSeconds(1));
    }
}
