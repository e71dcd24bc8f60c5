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
        RdmaProperties bound = Binder.get(env).bindOrCreate(RdmaProperties.PREFIX, RdmaProperties.class);
        return RdmaIneffectiveProperties.find(bound);
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
     * The warning does not depend on the auto-configured client bean being created. Read from
     * java.util.logging, commons-logging's backend on this class path (no SLF4J or Log4j here).
     */
    @Test
    void theWarningIsLoggedWithAnApplicationsOwnClientAndUnderLazyInitialisation() {
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
            new org.springframework.boot.test.context.runner.ApplicationContextRunner()
                    .withConfiguration(org.springframework.boot.autoconfigure.AutoConfigurations.of(
                            RdmaAutoConfiguration.class))
                    .withInitializer(ctx -> ctx.addBeanFactoryPostProcessor(
                            new org.springframework.boot.LazyInitializationBeanFactoryPostProcessor()))
                    .withBean(io.reactiverdma.reactive.RdmaClient.class, io.reactiverdma.reactive.RdmaClient::create)
                    .withPropertyValues("reactive-rdma.client.backoff.max-spins=100")
                    .run(ctx -> assertThat(ctx).hasNotFailed());
        } finally {
            jul.removeHandler(handler);
        }
        assertThat(logged).anySatisfy(m -> assertThat(m).contains("reactive-rdma.client.backoff.[max-spins] set"));
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
