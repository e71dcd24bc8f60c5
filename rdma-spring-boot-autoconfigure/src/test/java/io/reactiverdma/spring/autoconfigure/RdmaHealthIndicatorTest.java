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
        Health h = new RdmaHealthIndicator(sysfs, null).health();
        assertThat(h.getStatus()).isEqualTo(Status.UP);
        assertThat(h.getDetails().get("devices")).isEqualTo(Map.of("rxe0", Map.of("1", "ACTIVE"),
                "mlx5_0", Map.of("1", "DOWN")));
    }

    @Test
    void downWithoutAnActivePortOrWithoutDevices() throws IOException {
        Health none = new RdmaHealthIndicator(sysfs.resolve("missing"), null).health();
        assertThat(none.getStatus()).isEqualTo(Status.DOWN);
        assertThat((String) none.getDetails().get("reason")).startsWith("no RDMA device");
        port("rxe0", "1", "1: DOWN");
        Health down = new RdmaHealthIndicator(sysfs, null).health();
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
        assertThat(h.getDetails().get("server")).isEqualTo("not listening");
    }

    @Test
    void theIndicatorIsAutoConfiguredUnlessDisabled() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
                AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaHealthAutoConfiguration.class));
        runner.run(ctx -> assertThat(ctx).hasSingleBean(RdmaHealthIndicator.class));
        runner.withPropertyValues("management.health.rdma.enabled=false")
                .run(ctx -> assertThat(ctx).doesNotHaveBean(RdmaHealthIndicator.class));
    }
}
