package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectionAcceptor;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.rsocket.RdmaClientTransport;
import io.reactiverdma.rsocket.RdmaServerChannel;
import io.reactiverdma.test.LoopbackRdma;
import io.rsocket.RSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketRequesterAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.messaging.rsocket.RSocketRequester;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The RSocket server over RDMA that {@code reactive-rdma.rsocket.server.port} starts, serving {@code @MessageMapping}
 * controllers through Boot's own RSocketMessageHandler, on the loopback device; the client is the auto-configured
 * RSocketRequester.Builder with one call, {@code transport(RdmaClientTransport.create(client))}.
 */
@Timeout(120)
class RdmaRSocketServerAutoConfigurationTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    @RegisterExtension
    static final LoopbackRdma rdma = LoopbackRdma.create();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RSocketStrategiesAutoConfiguration.class,
                    RSocketMessagingAutoConfiguration.class, RSocketRequesterAutoConfiguration.class,
                    RdmaAutoConfiguration.class, RdmaMetricsAutoConfiguration.class,
                    RdmaRSocketServerAutoConfiguration.class, RdmaRSocketHealthAutoConfiguration.class))
            .withUserConfiguration(EchoController.class);

    @Test
    void withoutThePortThereIsNoRSocketServerOverRdma() {
        runner.withPropertyValues("reactive-rdma.rsocket.server.host=" + rdma.host()).run(ctx ->
                assertThat(ctx).hasNotFailed().doesNotHaveBean(RdmaRSocketServerLifecycle.class)
                        .doesNotHaveBean(RdmaRSocketHealthIndicator.class));
    }

    @Test
    void thePortWithoutAHostFailsTheStartNamingTheHostProperty() {
        runner.withPropertyValues("reactive-rdma.rsocket.server.port=0").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("reactive-rdma.rsocket.server.host");
        });
    }

    @Test
    void aZeroBindTimeoutFailsTheStartNamingTheProperty() {
        runner.withPropertyValues(serverProperties("reactive-rdma.rsocket.server.bind-timeout=0s")).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("reactive-rdma.rsocket.server.bind-timeout");
        });
    }

    @Test
    void aPortOutOfRangeFailsTheStartNamingThePortProperty() {
        runner.withPropertyValues("reactive-rdma.rsocket.server.host=" + rdma.host(),
                "reactive-rdma.rsocket.server.port=70000").run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().hasMessageContaining("reactive-rdma.rsocket.server.port")
                    .hasMessageContaining("0..65535");
        });
    }

    /**
     * The RSocket server takes the RDMA server's options, bound by the one code path: a value the engine refuses
     * fails the start naming the RSocket server's property. Before the two shared one set of properties the
     * option did not exist under reactive-rdma.rsocket.server, the value was ignored and the context started.
     */
    @Test
    void anRdmaServerOptionUnderTheRSocketServerIsBoundAndCheckedNamingItsProperty() {
        runner.withPropertyValues(serverProperties("reactive-rdma.rsocket.server.receive-queue-depth=0")).run(ctx -> {
            assertThat(ctx).hasFailed();
            assertThat(ctx.getStartupFailure()).rootCause().isInstanceOf(InvalidConfigurationPropertyValueException.class)
                    .hasMessageContaining("reactive-rdma.rsocket.server.receive-queue-depth");
        });
    }

    /** And a value it takes reaches the RDMA server under it: here the most connections at once. */
    @Test
    void maxConnectionsUnderTheRSocketServerLimitsItsRdmaConnections() {
        runner.withPropertyValues(serverProperties("reactive-rdma.rsocket.server.max-connections=1")).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            RdmaRSocketServerLifecycle server = ctx.getBean(RdmaRSocketServerLifecycle.class);
            RSocketRequester first = requester(ctx.getBean(RSocketRequester.Builder.class), server);
            RSocketRequester second = requester(ctx.getBean(RSocketRequester.Builder.class), server);
            try {
                StepVerifier.create(first.route("echo").data("1").retrieveMono(String.class))
                        .expectNext("echo:1").expectComplete().verify(WAIT);
                StepVerifier.create(second.route("echo").data("2").retrieveMono(String.class))
                        .expectError().verify(WAIT);
                assertThat(server.server().connectionCount()).isEqualTo(1);
            } finally {
                first.dispose();
                second.dispose();
            }
        });
    }

    /**
     * The application's ConnectionAcceptor bean admits the RSocket server's RDMA connections as it admits the RDMA
     * server's: a request it rejects never reaches RSocket, and the requester fails with the acceptor's reason.
     * Before the RSocket server took the bean, the connection was accepted and the request answered.
     */
    @Test
    void aConnectionAcceptorBeanAdmitsTheRSocketServersConnections() {
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        runner.withBean(ConnectionAcceptor.class, () -> request -> {
                    asked.incrementAndGet();
                    return Mono.just(Admission.reject("not on the allow-list"));
                })
                .withPropertyValues(serverProperties()).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    RSocketRequester requester = requester(ctx.getBean(RSocketRequester.Builder.class),
                            ctx.getBean(RdmaRSocketServerLifecycle.class));
                    try {
                        StepVerifier.create(requester.route("echo").data("x").retrieveMono(String.class))
                                .expectErrorSatisfies(e -> {
                                    assertThat(rejection(e).rejection()).isEqualTo(ConnectionRejectedException.Rejection.REFUSED);
                                    assertThat(rejection(e).serverReason()).isEqualTo("not on the allow-list");
                                })
                                .verify(WAIT);
                        assertThat(asked).as("requests the acceptor decided").hasValue(1);
                    } finally {
                        requester.dispose();
                    }
                });
    }

    /**
     * The RDMA server's rule for several acceptor beans holds for the RSocket server too: none primary fails the
     * start naming them, never "admit everyone". Before, the context started and admitted every peer.
     */
    @Test
    void twoConnectionAcceptorBeansFailTheRSocketServersStartNamingThem() {
        runner.withBean("allowList", ConnectionAcceptor.class, () -> r -> Mono.just(Admission.accept()))
                .withBean("authentication", ConnectionAcceptor.class, () -> r -> Mono.just(Admission.accept()))
                .withPropertyValues(serverProperties()).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("reactive-rdma.rsocket.server.port")
                            .hasMessageContaining("at most one ConnectionAcceptor bean")
                            .hasMessageContaining("allowList").hasMessageContaining("authentication");
                });
    }

    /** Of two acceptor beans the @Primary one decides, as for the RDMA server. */
    @Test
    void ofTwoConnectionAcceptorBeansThePrimaryOneAdmitsTheRSocketServersConnections() {
        runner.withBean("primary", ConnectionAcceptor.class, () -> r -> Mono.just(Admission.reject("primary says no")),
                        d -> d.setPrimary(true))
                .withBean("other", ConnectionAcceptor.class, () -> r -> Mono.just(Admission.accept()))
                .withPropertyValues(serverProperties()).run(ctx -> {
                    assertThat(ctx).hasNotFailed();
                    RSocketRequester requester = requester(ctx.getBean(RSocketRequester.Builder.class),
                            ctx.getBean(RdmaRSocketServerLifecycle.class));
                    try {
                        StepVerifier.create(requester.route("echo").data("x").retrieveMono(String.class))
                                .expectErrorSatisfies(e -> assertThat(rejection(e).serverReason()).isEqualTo("primary says no"))
                                .verify(WAIT);
                    } finally {
                        requester.dispose();
                    }
                });
    }

    /**
     * accept-timeout set with no ConnectionAcceptor bean bounds nothing: the start says so, naming the RSocket
     * server's property. Before, it was taken in silence.
     */
    @Test
    void anAcceptTimeoutWithoutAnAcceptorBeanIsLoggedAsHavingNoEffect() {
        List<String> logged = RdmaIneffectivePropertiesTest.logged(
                runner.withPropertyValues(serverProperties("reactive-rdma.rsocket.server.accept-timeout=2s")));
        assertThat(logged).contains("reactive-rdma.rsocket.server.accept-timeout set, but the server has no "
                + "ConnectionAcceptor (no bean, none set by an RdmaServerCustomizer): it bounds nothing, so it has no "
                + "effect");
    }

    /** The ConnectionRejectedException in {@code e}'s cause chain (RSocket's connector wraps the transport's error). */
    private static ConnectionRejectedException rejection(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectionRejectedException r) {
                return r;
            }
        }
        throw new AssertionError("no ConnectionRejectedException in the cause chain of " + e, e);
    }

    @Test
    void withoutSpringsRSocketMessageHandlerTheStartFailsSayingWhatIsMissing() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class,
                        RdmaRSocketServerAutoConfiguration.class))
                .withPropertyValues(serverProperties()).run(ctx -> {
                    assertThat(ctx).hasFailed();
                    assertThat(ctx.getStartupFailure()).rootCause()
                            .isInstanceOf(InvalidConfigurationPropertyValueException.class)
                            .hasMessageContaining("RSocketMessageHandler");
                });
    }

    @Test
    void messageMappingControllersAnswerRequestResponseStreamAndChannelOverRdma() {
        runner.withPropertyValues(serverProperties()).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            RSocketRequester requester = requester(ctx.getBean(RSocketRequester.Builder.class),
                    ctx.getBean(RdmaRSocketServerLifecycle.class));
            try {
                StepVerifier.create(requester.route("echo").data("hello").retrieveMono(String.class))
                        .expectNext("echo:hello").expectComplete().verify(WAIT);
                // 3,000 items, asked for 64 at a time: RSocket's request(n) rides on the RDMA connection.
                StepVerifier.create(requester.route("count").data("3000").retrieveFlux(String.class).limitRate(64)
                                .index().filter(t -> !Long.toString(t.getT1()).equals(t.getT2())).count())
                        .expectNext(0L).expectComplete().verify(WAIT);
                StepVerifier.create(requester.route("upper").data(Flux.just("a", "b", "c")).retrieveFlux(String.class))
                        .expectNext("A", "B", "C").expectComplete().verify(WAIT);
            } finally {
                requester.dispose();
            }
        });
    }

    @Test
    void aPayloadLargerThanOneFrameIsFragmentedByTheServer() {
        String big = "x".repeat(20_000); // 4 KiB frames: the reply is about five fragments
        runner.withPropertyValues(serverProperties("reactive-rdma.rsocket.server.receive-buffer-size=4096"))
                .run(ctx -> {
                    RdmaRSocketServerLifecycle server = ctx.getBean(RdmaRSocketServerLifecycle.class);
                    RdmaClientTransport transport = RdmaClientTransport.create(client(server));
                    RSocketRequester requester = ctx.getBean(RSocketRequester.Builder.class)
                            .rsocketConnector(c -> c.fragment(transport.maxFrameLength())).transport(transport);
                    try {
                        StepVerifier.create(requester.route("echo").data(big).retrieveMono(String.class))
                                .expectNext("echo:" + big).expectComplete().verify(WAIT);
                    } finally {
                        requester.dispose();
                    }
                });
    }

    @Test
    void theServerIsInHealthAndItsConnectionsInTheApplicationsMeterRegistry() {
        runner.withUserConfiguration(Registry.class).withPropertyValues(serverProperties()).run(ctx -> {
            RdmaRSocketHealthIndicator health = ctx.getBean("rdmaRSocketHealthIndicator", RdmaRSocketHealthIndicator.class);
            RdmaRSocketServerLifecycle server = ctx.getBean(RdmaRSocketServerLifecycle.class);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);
            RSocketRequester requester = requester(ctx.getBean(RSocketRequester.Builder.class), server);
            try {
                StepVerifier.create(requester.route("echo").data("x").retrieveMono(String.class))
                        .expectNext("echo:x").expectComplete().verify(WAIT);
                @SuppressWarnings("unchecked")
                Map<String, Object> servers = (Map<String, Object>) health.health().getDetails().get("servers");
                assertThat(servers).containsKey("rdmaRSocketServer");
                assertThat(String.valueOf(servers.get("rdmaRSocketServer"))).contains("connections=1");
                MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                double open = registry.find("rdma.connections").gauges().stream().mapToDouble(Gauge::value).sum();
                assertThat(open).as("rdma.connections in the application's registry").isEqualTo(1.0);
            } finally {
                requester.dispose();
            }
            server.stop();
            assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
        });
    }

    @Test
    void closingTheContextClosesTheRequestersConnection() {
        RSocketRequester[] requester = new RSocketRequester[1];
        RSocket[] connected = new RSocket[1];
        runner.withPropertyValues(serverProperties()).run(ctx -> {
            requester[0] = requester(ctx.getBean(RSocketRequester.Builder.class),
                    ctx.getBean(RdmaRSocketServerLifecycle.class));
            StepVerifier.create(requester[0].route("echo").data("x").retrieveMono(String.class))
                    .expectNext("echo:x").expectComplete().verify(WAIT);
            connected[0] = requester[0].rsocketClient().source().block(WAIT); // the connection it made
            assertThat(connected[0]).as("the requester's connection").isNotNull();
            assertThat(connected[0].isDisposed()).isFalse();
        });
        try {
            StepVerifier.create(connected[0].onClose()).expectComplete().verify(WAIT);
        } finally {
            requester[0].dispose();
        }
    }

    private static String[] serverProperties(String... more) {
        String[] p = new String[2 + more.length];
        p[0] = "reactive-rdma.rsocket.server.host=" + rdma.host();
        p[1] = "reactive-rdma.rsocket.server.port=0";
        System.arraycopy(more, 0, p, 2, more.length);
        return p;
    }

    private static RdmaClient client(RdmaRSocketServerLifecycle server) {
        RdmaServerChannel channel = server.server();
        assertThat(channel).as("the server is listening").isNotNull();
        return RdmaClient.create().host(rdma.host()).port(channel.address().getPort());
    }

    /** The one call of the docs: Boot's builder, an RDMA transport. */
    private static RSocketRequester requester(RSocketRequester.Builder builder, RdmaRSocketServerLifecycle server) {
        return builder.transport(RdmaClientTransport.create(client(server)));
    }

    @Controller
    static class EchoController {
        @MessageMapping("echo")
        Mono<String> echo(String s) {
            return Mono.just("echo:" + s);
        }

        @MessageMapping("count")
        Flux<String> count(String n) {
            return Flux.range(0, Integer.parseInt(n)).map(String::valueOf);
        }

        @MessageMapping("upper")
        Flux<String> upper(Flux<String> in) {
            return in.map(s -> s.toUpperCase(java.util.Locale.ROOT));
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Registry {
        @Bean
        SimpleMeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }
}
