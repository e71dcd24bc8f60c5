package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaServer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import reactor.core.publisher.Mono;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server bound in a lifecycle phase: after the web server starts, before it stops, and also under lazy
 * initialisation. On the host binding fails (no RDMA device): that failure shows the bind was attempted at
 * start, and is what the failure analyzer reports. Binding for real is GatewayRxeTest's (on rxe).
 */
class RdmaServerLifecycleTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class))
            .withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
            .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1");

    @Test
    void thePhaseIsAfterTheWebServerStartsAndBeforeItStops() {
        // Start in ascending phase order, stop in descending: above the web server's start/stop phase, below
        // its graceful shutdown (which drains HTTP requests while the RDMA server still serves them).
        assertThat(RdmaServerLifecycle.PHASE).isGreaterThan(WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE)
                .isLessThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE);
    }

    @Test
    void creatingTheBeanBindsNothingAndStartingBindsEvenWhenLazy() {
        runner.withInitializer(ctx -> ctx.addBeanFactoryPostProcessor(new LazyInitializationBeanFactoryPostProcessor()))
                .run(ctx -> {
                    assertThat(ctx).hasFailed();
                    RdmaException e = RdmaAutoConfigurationTest.findCause(ctx.getStartupFailure(), RdmaException.class);
                    // No RDMA on the host: the start tried to bind (and says why it could not).
                    assertThat(e.getMessage()).containsAnyOf("RDMA is not usable here", "cannot listen on");
                    FailureAnalysis analysis = new RdmaFailureAnalyzer().analyze(ctx.getStartupFailure());
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).startsWith("RDMA cannot be used: ");
                });
    }

    @Test
    void stopWithoutStartIsANoOpAndTheConfigurationIsKept() {
        RdmaServer configured = RdmaServer.create().host("10.77.0.1").handle(c -> Mono.empty());
        RdmaServerLifecycle lifecycle = new RdmaServerLifecycle(configured, Duration.ofSeconds(1), Duration.ofSeconds(1));
        lifecycle.stop();
        assertThat(lifecycle.isRunning()).isFalse();
        assertThat(lifecycle.server()).isNull();
        assertThat(lifecycle.configuration()).isSameAs(configured);
        assertThat(lifecycle.isAutoStartup()).isTrue();
    }

    @Test
    void aShutdownTimeoutThatIsNotPositiveFailsNamingIt() {
        runner.withPropertyValues("reactive-rdma.server.shutdown-timeout=0s").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(RdmaAutoConfigurationTest.findCause(ctx.getStartupFailure(),
                    org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException.class)
                    .getName()).isEqualTo("reactive-rdma.server.shutdown-timeout");
        });
    }
}
