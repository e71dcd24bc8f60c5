package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.SmartLifecycle;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configured server's graceful shutdown (issue 24, review finding 7) on the real engine (the loopback
 * device): the RDMA drain runs in the web server's graceful-shutdown phase, so HTTP and RDMA drain side by
 * side under the one {@code spring.lifecycle.timeout-per-shutdown-phase} instead of one after the other, and a
 * request in flight when the context closes is still answered.
 */
class RdmaServerShutdownHostTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Duration ANSWER_AFTER = Duration.ofSeconds(1);

    @RegisterExtension
    final LoopbackRdma rdma = LoopbackRdma.create();

    /**
     * Stands in for Boot's WebServerGracefulShutdownLifecycle (same phase; it drains HTTP): its drain takes a
     * while, and it records whether the RDMA server had started stopping when its own drain ended.
     */
    static final class HttpDrain implements SmartLifecycle {
        final AtomicReference<RdmaServerLifecycle> rdma = new AtomicReference<>();
        volatile Boolean rdmaRunningWhenHttpDrained;
        private volatile boolean running;

        @Override
        public void start() {
            running = true;
        }

        @Override
        public void stop() {
            running = false;
        }

        @Override
        public void stop(Runnable callback) {
            running = false;
            Mono.delay(Duration.ofMillis(500)).subscribe(t -> {
                rdmaRunningWhenHttpDrained = rdma.get().isRunning();
                callback.run();
            });
        }

        @Override
        public boolean isRunning() {
            return running;
        }

        @Override
        public int getPhase() {
            return WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE;
        }
    }

    /**
     * Before: the drain ran in a phase of its own after HTTP's (Integer.MAX_VALUE - 2047), so the context
     * waited for the HTTP drain, then for the RDMA drain (the RDMA server was still running when HTTP had
     * drained: 'expected false but was true').
     */
    @Test
    void aRequestInFlightAtCloseIsAnsweredAndRdmaDrainsAlongsideHttp() throws Exception {
        HttpDrain http = new HttpDrain();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class))
                .withBean(RdmaConnectionHandler.class, () -> conn -> conn.send(conn.receive(m -> {
                    byte[] b = m.toByteArray();
                    return ByteBuffer.wrap(b);
                }).delayElements(ANSWER_AFTER)))
                .withBean(HttpDrain.class, () -> http)
                .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=" + rdma.host(),
                        "reactive-rdma.server.port=0", "reactive-rdma.server.drain-timeout=20s")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    RdmaServerLifecycle server = ctx.getBean(RdmaServerLifecycle.class);
                    http.rdma.set(server);
                    RdmaConnection client = RdmaClient.create().host(rdma.host()).port(server.server().port())
                            .connect().block(WAIT);
                    CompletableFuture<String> answer = client.send(ByteBuffer.wrap("ping".getBytes(StandardCharsets.UTF_8)))
                            .then(client.receive(m -> new String(m.toByteArray(), StandardCharsets.UTF_8)).next())
                            .toFuture();
                    CompletableFuture<Void> closed = CompletableFuture.runAsync(ctx::close);
                    assertThat(answer.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS))
                            .as("the answer to a request in flight at close").isEqualTo("ping");
                    client.dispose(); // the drain ends with the server's last connection
                    closed.get(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                    assertThat(http.rdmaRunningWhenHttpDrained).as("the RDMA server still running when HTTP had"
                            + " drained: the drains ran one after the other").isFalse();
                });
    }
}
