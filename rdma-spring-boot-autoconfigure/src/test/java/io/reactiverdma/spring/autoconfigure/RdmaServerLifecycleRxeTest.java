package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configured server on a real device: bound when the context starts, still listening on the same port
 * with its connection open through a pause and restart of the context (as Spring Test's context cache does),
 * reported UP with its connection, and disposed when the context closes.
 */
@Tag(RxeTestSupport.TAG)
@Timeout(300)
class RdmaServerLifecycleRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @Test
    void theServerKeepsItsPortAndConnectionsThroughAPauseAndIsDisposedWithTheContext() {
        RxeTestSupport.requireDevice();
        String host = RxeTestSupport.deviceAddress();
        AtomicReference<DisposableRdmaServer> bound = new AtomicReference<>();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaHealthAutoConfiguration.class))
                .withBean(RdmaConnectionHandler.class, () -> RdmaConnection::onDispose)
                .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=" + host,
                        "reactive-rdma.server.port=0", "reactive-rdma.server.bind-timeout=60s",
                        "reactive-rdma.client.connect-timeout=60s")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    RdmaServerLifecycle lifecycle = ctx.getBean(RdmaServerLifecycle.class);
                    DisposableRdmaServer server = lifecycle.server();
                    bound.set(server);
                    assertThat(lifecycle.isRunning()).isTrue();
                    int port = server.port();
                    RdmaConnection client = ctx.getBean(RdmaClient.class).host(host).port(port).connect().block(WAIT);
                    assertThat(client).isNotNull();
                    try {
                        ctx.pause();
                        ctx.restart();
                        assertThat(lifecycle.server()).isSameAs(server);
                        assertThat(server.isDisposed()).isFalse();
                        assertThat(server.port()).isEqualTo(port);
                        assertThat(client.isDisposed()).as("the client's connection closed by the pause").isFalse();
                        Health health = ctx.getBean(RdmaHealthIndicator.class).health();
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        @SuppressWarnings("unchecked")
                        Map<String, Object> servers = (Map<String, Object>) health.getDetails().get("servers");
                        assertThat(servers.get("rdmaServer").toString()).contains(":" + port);
                    } finally {
                        client.dispose();
                        client.onDispose().block(WAIT);
                    }
                });
        assertThat(bound.get()).isNotNull();
        assertThat(bound.get().isDisposed()).as("disposed when the context closed").isTrue();
    }
}
