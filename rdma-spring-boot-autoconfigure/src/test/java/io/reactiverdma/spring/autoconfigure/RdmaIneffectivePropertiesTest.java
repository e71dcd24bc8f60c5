package io.reactiverdma.spring.autoconfigure;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.env.MockEnvironment;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Properties that are set but change nothing are found (and so logged), in any relaxed spelling. */
class RdmaIneffectivePropertiesTest {
    private static List<String> find(String... properties) {
        RdmaProperties bound = Binder.get(environment(properties)).bindOrCreate(RdmaProperties.PREFIX,
                RdmaProperties.class);
        return RdmaIneffectiveProperties.find(bound);
    }

    /** {@code properties} as set in a file, or as environment variables when they start with REACTIVERDMA_. */
    private static MockEnvironment environment(String... properties) {
        MockEnvironment env = new MockEnvironment();
        Map<String, Object> variables = new HashMap<>();
        for (String p : properties) {
            int eq = p.indexOf('=');
            if (p.startsWith("REACTIVERDMA_")) {
                variables.put(p.substring(0, eq), p.substring(eq + 1)); // an environment variable
            } else {
                env.setProperty(p.substring(0, eq), p.substring(eq + 1));
            }
        }
        env.getPropertySources().addLast(new SystemEnvironmentPropertySource(
                StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, variables));
        return env;
    }

    @Test
    void backoffWithoutTheBackoffStrategyIsFound() {
        assertThat(find("reactive-rdma.client.backoff.max-spins=100", "REACTIVERDMA_CLIENT_BACKOFF_MAXYIELDS=3"))
                .singleElement().asString()
                .contains("reactive-rdma.client.backoff.[max-spins, max-yields] set")
                .contains("idle-strategy is event-driven, not backoff");
        assertThat(find("reactive-rdma.client.idle-strategy=busy-spin", "reactive-rdma.client.backoff.max-spins=1"))
                .singleElement().asString().contains("idle-strategy is busy-spin");
    }

    @Test
    void eventDrivenSpinPollsWithAnotherStrategyIsFound() {
        assertThat(find("reactive-rdma.client.idle-strategy=busy-spin", "reactive-rdma.client.event-driven-spin-polls=5"))
                .singleElement().asString()
                .contains("reactive-rdma.client.event-driven-spin-polls set")
                .contains("idle-strategy is busy-spin, not event-driven");
        assertThat(find("reactive-rdma.client.event-driven-spin-polls=5")).isEmpty();
    }

    @Test
    void backoffWithTheBackoffStrategyAndNothingSetAreFine() {
        assertThat(find("reactive-rdma.client.idle-strategy=backoff", "reactive-rdma.client.backoff.max-spins=100"))
                .isEmpty();
        assertThat(find()).isEmpty();
        assertThat(find("reactive-rdma.client.port=9000", "reactive-rdma.server.enabled=false")).isEmpty();
    }

    @Test
    void serverPropertiesWithoutAnEnabledServerAreFound() {
        assertThat(find("reactive-rdma.server.host=10.77.0.1", "reactive-rdma.server.port=9"))
                .singleElement().asString()
                .contains("reactive-rdma.server.[host, port] set, but reactive-rdma.server.enabled is not true");
        assertThat(find("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1",
                "reactive-rdma.server.backoff.max-spins=1")).singleElement().asString()
                .contains("reactive-rdma.server.backoff.[max-spins]");
        assertThat(find("reactive-rdma.server.backoff.min-park-period=5us")).singleElement().asString()
                .contains("reactive-rdma.server.[backoff.min-park-period] set, but");
    }

    /**
     * The warning does not depend on the auto-configured client bean being created.
     */
    @Test
    void theWarningIsLoggedWithAnApplicationsOwnClientAndUnderLazyInitialisation() {
        List<String> logged = logged(new org.springframework.boot.test.context.runner.ApplicationContextRunner()
                .withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations.of(
                        RdmaAutoConfiguration.class))
                .withInitializer(ctx -> ctx.addBeanFactoryPostProcessor(
                        new org.springframework.boot.LazyInitializationBeanFactoryPostProcessor()))
                .withBean(io.reactiverdma.reactive.RdmaClient.class, io.reactiverdma.reactive.RdmaClient::create)
                .withPropertyValues("reactive-rdma.client.backoff.max-spins=100"));
        assertThat(logged).anySatisfy(m -> assertThat(m).contains("reactive-rdma.client.backoff.[max-spins] set"));
    }

    /**
     * The RSocket server over RDMA's properties without its port: no server is started, and each property set is
     * named. Before, nothing was logged (the properties are not even bound without the port).
     */
    @Test
    void rsocketServerPropertiesWithoutThePortAreLoggedPropertyByProperty() {
        List<String> logged = logged(new org.springframework.boot.test.context.runner.ApplicationContextRunner()
                .withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations.of(
                        RdmaAutoConfiguration.class, RdmaRSocketServerAutoConfiguration.class))
                .withPropertyValues("reactive-rdma.rsocket.server.host=10.77.0.1",
                        "reactive-rdma.rsocket.server.max-connections=10"));
        assertThat(logged).anySatisfy(m -> assertThat(m).isEqualTo(
                "reactive-rdma.rsocket.server.[host, max-connections] set, but reactive-rdma.rsocket.server.port is "
                        + "not set: no RSocket server over RDMA is started, so they have no effect"));
    }

    @Test
    void rsocketServerPropertiesWithoutThePortAreFoundInAnyRelaxedSpelling() {
        assertThat(findRSocket(false, "REACTIVERDMA_RSOCKET_SERVER_RECEIVEBUFFERSIZE=64KB",
                "reactive-rdma.rsocket.server.idleStrategy=busy-spin")).singleElement().asString()
                .startsWith("reactive-rdma.rsocket.server.[idle-strategy, receive-buffer-size] set, but "
                        + "reactive-rdma.rsocket.server.port is not set");
        assertThat(findRSocket(false)).isEmpty();
        assertThat(findRSocket(false, "reactive-rdma.server.host=10.77.0.1")).isEmpty();
    }

    /** The RDMA server's switch and drain under the RSocket server: not its properties, so nothing binds them. */
    @Test
    void enabledAndDrainTimeoutUnderTheRSocketServerAreFoundAsNotItsProperties() {
        assertThat(findRSocket(true, "reactive-rdma.rsocket.server.port=7000",
                "reactive-rdma.rsocket.server.enabled=true", "reactive-rdma.rsocket.server.drain-timeout=5s"))
                .containsExactly(
                        "reactive-rdma.rsocket.server.enabled set, but the RSocket server over RDMA has no such "
                                + "property: setting reactive-rdma.rsocket.server.port starts it",
                        "reactive-rdma.rsocket.server.drain-timeout set, but the RSocket server over RDMA has no "
                                + "such property: it closes its connections at once on stop");
    }

    /** Started, the RSocket server's idle strategy and shared receive queue get the RDMA server's checks. */
    @Test
    void aStartedRSocketServersBackoffAndSharedReceiveQueueGroupAreChecked() {
        assertThat(findRSocket(true, "reactive-rdma.rsocket.server.port=7000",
                "reactive-rdma.rsocket.server.backoff.max-spins=1",
                "reactive-rdma.rsocket.server.shared-receive-queue-group=rs")).containsExactly(
                "reactive-rdma.rsocket.server.backoff.[max-spins] set, but reactive-rdma.rsocket.server.idle-strategy "
                        + "is event-driven, not backoff: they have no effect",
                "reactive-rdma.rsocket.server.shared-receive-queue-group set, but "
                        + "reactive-rdma.rsocket.server.shared-receive-queue-depth is 0 (no shared receive queue): "
                        + "it has no effect");
        assertThat(findRSocket(true, "reactive-rdma.rsocket.server.port=7000",
                "reactive-rdma.rsocket.server.host=10.77.0.1")).isEmpty();
    }

    /** The port set, but the auto-configuration did not apply (rdma-rsocket or Boot's RSocket missing). */
    @Test
    void thePortWithoutAStartedRSocketServerIsFound() {
        assertThat(findRSocket(false, "reactive-rdma.rsocket.server.port=7000")).singleElement().asString()
                .startsWith("reactive-rdma.rsocket.server.port set, but no RSocket server over RDMA is started")
                .contains("spring-boot-starter-rsocket").contains("rdma-rsocket");
    }

    /** A value that does not bind is named, not thrown: a warning never fails the start. */
    @Test
    void anRSocketServerValueThatDoesNotBindIsNamedWithoutFailing() {
        assertThat(findRSocket(false, "reactive-rdma.rsocket.server.max-connections=many")).singleElement()
                .asString().startsWith("reactive-rdma.rsocket.server.max-connections set to a value that does not "
                        + "bind");
    }

    /**
     * accept-timeout bounds a ConnectionAcceptor's decision: a server without one (no bean, none from a customizer)
     * has nothing to bound. With one, nothing is found; nor at the default.
     */
    @Test
    void anAcceptTimeoutOfAServerWithoutAnAcceptorIsFound() {
        RdmaProperties.Server p = new RdmaProperties.Server();
        p.setAcceptTimeout(java.time.Duration.ofSeconds(2));
        io.reactiverdma.reactive.RdmaServer server = io.reactiverdma.reactive.RdmaServer.create();
        assertThat(RdmaIneffectiveProperties.findForServer("reactive-rdma.server", p, server)).containsExactly(
                "reactive-rdma.server.accept-timeout set, but the server has no ConnectionAcceptor (no bean, none set "
                        + "by an RdmaServerCustomizer): it bounds nothing, so it has no effect");
        assertThat(RdmaIneffectiveProperties.findForServer("reactive-rdma.server", p,
                server.accept(r -> reactor.core.publisher.Mono.just(io.reactiverdma.reactive.Admission.accept()))))
                .isEmpty();
        assertThat(RdmaIneffectiveProperties.findForServer("reactive-rdma.server", new RdmaProperties.Server(), server))
                .isEmpty();
    }

    private static List<String> findRSocket(boolean started, String... properties) {
        return RdmaIneffectiveProperties.findRSocket(Binder.get(environment(properties)), started);
    }

    /**
     * What the context that {@code runner} starts logs as warnings, read from java.util.logging, commons-logging's
     * backend on this class path (no SLF4J or Log4j here).
     */
    static List<String> logged(org.springframework.boot.test.context.runner.ApplicationContextRunner runner) {
        List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                logged.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        java.util.logging.Logger jul = java.util.logging.Logger.getLogger(RdmaAutoConfiguration.class.getName());
        jul.addHandler(handler);
        try {
            runner.run(ctx -> assertThat(ctx).hasNotFailed());
        } finally {
            jul.removeHandler(handler);
        }
        return logged;
    }

    @Test
    void aSharedReceiveQueueGroupWithoutADepthAndDatagramBackoffAreFound() {
        assertThat(find("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1",
                "reactive-rdma.server.shared-receive-queue-group=kv")).singleElement().asString()
                .contains("reactive-rdma.server.shared-receive-queue-group set, but "
                        + "reactive-rdma.server.shared-receive-queue-depth is 0");
        assertThat(find("reactive-rdma.datagram.backoff.max-spins=1")).singleElement().asString()
                .contains("reactive-rdma.datagram.backoff.[max-spins]");
    }

    @Test
    void aServerPropertySetByItsDeprecatedNameIsNamedOnce() {
        assertThat(find("reactive-rdma.server.ack-timeout=14")).singleElement().asString()
                .contains("reactive-rdma.server.[ack-timeout-exponent] set");
    }
}
