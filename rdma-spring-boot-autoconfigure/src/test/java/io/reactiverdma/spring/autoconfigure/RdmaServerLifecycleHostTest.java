package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.test.LoopbackRdma;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The server's lifecycle on the real engine (the loopback device; these tests ran on a hand-written fake
 * server before): not paused with the context, rebound after it disposed itself, and a stop that returns at
 * once and calls back when the drain ended.
 */
class RdmaServerLifecycleHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @RegisterExtension
    final LoopbackRdma rdma = LoopbackRdma.create();

    /**
     * A lifecycle of a real server on the loopback device (port 0): its handler runs until the peer closes, so
     * a graceful drain ends when the test's client disconnects.
     */
    private RdmaServerLifecycle onLoopback(Duration drain, Duration shutdown) {
        RdmaServer configured = RdmaServer.create().host(rdma.host()).port(0)
                .handle(c -> c.receive(m -> {
                    m.release();
                    return 0;
                }).then());
        return new RdmaServerLifecycle(configured, Duration.ofSeconds(30), drain, shutdown);
    }

    /**
     * Spring Test 7 pauses cached contexts; the web server is not pauseable, so neither is the RDMA server:
     * a pause would close every RDMA connection and a restart bind anew (with port 0, on another port).
     */
    @Test
    void pausingTheContextKeepsTheServerBoundAsTheWebServerIs() {
        try (org.springframework.context.support.GenericApplicationContext ctx =
                     new org.springframework.context.support.GenericApplicationContext()) {
            ctx.registerBean(RdmaServerLifecycle.class, () -> onLoopback(Duration.ZERO, Duration.ofSeconds(5)));
            ctx.refresh();
            DisposableRdmaServer before = ctx.getBean(RdmaServerLifecycle.class).server();
            RdmaConnection client = RdmaClient.create().host(rdma.host()).port(before.port()).connectNow(WAIT);
            ctx.pause();
            ctx.restart();
            assertThat(ctx.getBean(RdmaServerLifecycle.class).server()).isSameAs(before);
            assertThat(before.isDisposed()).as("disposed by the pause").isFalse();
            assertThat(client.isDisposed()).as("the client's connection closed by the pause").isFalse();
            assertThat(before.connectionCount()).isEqualTo(1);
        }
    }

    /** On device removal the engine disposes the server: the lifecycle says so, and a start binds again. */
    @Test
    void aServerThatDisposedItselfIsNotRunningAndAStartBindsItAgain() {
        RdmaServerLifecycle lifecycle = onLoopback(Duration.ZERO, Duration.ofSeconds(5));
        lifecycle.start();
        DisposableRdmaServer first = lifecycle.server();
        first.dispose(); // what the engine does when the server's device is removed
        assertThat(lifecycle.isRunning()).as("running after the server disposed itself").isFalse();
        lifecycle.start();
        assertThat(lifecycle.server()).isNotSameAs(first);
        assertThat(lifecycle.server().isDisposed()).isFalse();
        assertThat(lifecycle.isRunning()).isTrue();
        lifecycle.stop();
    }

    /**
     * The context's stop waits for the callback under spring.lifecycle.timeout-per-shutdown-phase: stop(callback)
     * must return at once, so that timeout bounds the drain, and call back when the drain ended (here: when
     * the server's one connection closes).
     */
    @Test
    void stopReturnsAtOnceAndCallsBackWhenTheDrainEnds() throws InterruptedException {
        RdmaServerLifecycle lifecycle = onLoopback(Duration.ofSeconds(30), Duration.ofSeconds(30));
        lifecycle.start();
        RdmaConnection client = RdmaClient.create().host(rdma.host()).port(lifecycle.server().port()).connectNow(WAIT);
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> lifecycle.stop(stopped::countDown), "stop(callback) blocked for the drain");
        assertThat(lifecycle.isRunning()).isFalse();
        assertThat(stopped.getCount()).as("called back before the drain ended").isEqualTo(1);
        client.dispose();
        assertThat(stopped.await(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    }


    /**
     * The RDMA server auto-configured with accept-timeout and no ConnectionAcceptor bean: the start says the
     * timeout bounds nothing, naming the RDMA server's property (as the RSocket server's test does for its own).
     */
    @Test
    void anAcceptTimeoutWithoutAnAcceptorBeanIsLoggedAsHavingNoEffect() {
        java.util.List<String> logged = RdmaIneffectivePropertiesTest.logged(
                new org.springframework.boot.test.context.runner.ApplicationContextRunner()
                        .withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations.of(
                                RdmaAutoConfiguration.class))
                        .withBean(RdmaConnectionHandler.class, () -> c -> c.onDispose())
                        .withPropertyValues("reactive-rdma.server.enabled=true",
                                "reactive-rdma.server.host=" + rdma.host(), "reactive-rdma.server.port=0",
                                "reactive-rdma.server.accept-timeout=2s"));
        assertThat(logged).contains("reactive-rdma.server.accept-timeout set, but the server has no "
                + "ConnectionAcceptor (no bean, none set by an RdmaServerCustomizer): it bounds nothing, so it has no "
                + "effect");
    }
}
