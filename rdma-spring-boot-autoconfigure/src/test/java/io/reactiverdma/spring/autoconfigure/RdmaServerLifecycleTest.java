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
 * The server bound in a lifecycle phase: after the web server starts, in its graceful-shutdown phase, and also
 * under lazy initialisation. Through the auto-configuration the server's host is 10.77.0.1, which no device
 * of the loopback provider has: that failure shows the bind was attempted at start, and is what the failure
 * analyzer reports. Pause, self-disposal and drain on a real server: {@link RdmaServerLifecycleHostTest}; a
 * fake server stays here only for a drain and a close that never end, which the engine cannot be made to do.
 */
class RdmaServerLifecycleTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class))
            .withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
            .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1");

    @Test
    void thePhaseIsAfterTheWebServerStartsAndItsDrainIsHttps() {
        // Start in ascending phase order, stop in descending: above the web server's start/stop phase (bound
        // after it started), in its graceful-shutdown phase (RDMA drains while HTTP drains, under one timeout).
        assertThat(RdmaServerLifecycle.PHASE).isGreaterThan(WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE)
                .isEqualTo(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE);
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

    /** A fake server whose drain or close never ends (the engine cannot be made to hang on demand). */
    private static final class Binds {
        final java.util.List<FakeBoundServer> bound = new java.util.concurrent.CopyOnWriteArrayList<>();
        final boolean closesAtOnce;

        Binds(boolean closesAtOnce) {
            this.closesAtOnce = closesAtOnce;
        }

        RdmaServerLifecycle lifecycle(Duration drain, Duration shutdown) {
            return new RdmaServerLifecycle(CONFIGURED, timeout -> {
                FakeBoundServer s = new FakeBoundServer(bound.size() + 1, closesAtOnce);
                bound.add(s);
                return s;
            }, Duration.ofSeconds(1), drain, shutdown);
        }
    }

    private static final RdmaServer CONFIGURED = RdmaServer.create().host("10.77.0.1").handle(c -> Mono.empty());

    /** A drain and a close that never end: the callback still comes after drain + shutdown timeouts. */
    @Test
    void aDrainThatNeverEndsStillCallsBackAfterTheTimeouts() throws InterruptedException {
        Binds binds = new Binds(false);
        RdmaServerLifecycle graceful = binds.lifecycle(Duration.ofMillis(100), Duration.ofMillis(100));
        graceful.start();
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        graceful.stop(stopped::countDown);
        assertThat(stopped.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(binds.bound.get(0).isDisposed()).as("closed after the drain timeout").isTrue();

        RdmaServerLifecycle atOnce = binds.lifecycle(Duration.ZERO, Duration.ofMillis(100));
        atOnce.start();
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> atOnce.stop(closed::countDown), "stop(callback) blocked for the close");
        assertThat(closed.await(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    }

    /** Contexts that asked for it share the engine: only the last one to close releases it, once. */
    @Test
    void theEngineIsReleasedWhenTheLastContextThatAskedForItCloses() {
        java.util.concurrent.atomic.AtomicInteger releases = new java.util.concurrent.atomic.AtomicInteger();
        RdmaEngineRelease first = new RdmaEngineRelease(() -> Mono.fromRunnable(releases::incrementAndGet));
        RdmaEngineRelease second = new RdmaEngineRelease(() -> Mono.fromRunnable(releases::incrementAndGet));
        first.destroy();
        first.destroy();
        assertThat(releases).as("released while another context still uses the engine").hasValue(0);
        second.destroy();
        assertThat(releases).hasValue(1);
    }

    @Test
    void releasingTheEngineOnCloseIsOptIn() {
        ApplicationContextRunner plain = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class));
        plain.run(ctx -> assertThat(ctx).doesNotHaveBean(RdmaEngineRelease.class));
        plain.withPropertyValues("reactive-rdma.release-engine-on-close=true")
                .run(ctx -> assertThat(ctx).hasSingleBean(RdmaEngineRelease.class));
    }
}
