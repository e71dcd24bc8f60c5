package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.StaticListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.ClassPathResource;
import reactor.core.publisher.Mono;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@link RdmaOption} can be set from Spring properties, and each property reaches the configuration it
 * belongs to. An option added to {@link RdmaOption#ALL} without a property fails here, named.
 */
class EveryOptionHasAPropertyTest {
    /** The property of an option whose name is not the option's own in kebab case. */
    private static final Map<RdmaOption<?>, String> RENAMED = Map.of(
            RdmaOption.ACK_TIMEOUT, "ack-timeout-exponent",
            RdmaOption.DATAGRAM_ADDRESS_HANDLES, "address-handles",
            RdmaOption.DATAGRAM_PEER_REFRESH, "peer-refresh");

    private static final List<String> SIDES = List.of("client", "server", "datagram");

    /** A value other than the default for every property of each side (what the reach test sets). */
    private static final Map<String, String> CLIENT = values("client",
            "send-queue-depth=256", "receive-queue-depth=32", "receive-buffer-size=64KB", "max-inline-data=128B",
            "poll-batch-size=16", "credit-flow-control=false", "completion-queue-mode=per-connection",
            "idle-strategy=busy-spin", "connect-timeout=3s", "read-atomic-depth=16", "rnr-retry-count=5",
            "min-rnr-timer=20", "retry-count=2", "signal-interval=4", "ack-timeout-exponent=14",
            "type-of-service=96", "local-address=10.77.0.2", "completion-vector=3", "idle-probe-interval=5s");
    private static final Map<String, String> SERVER = values("server",
            "host=10.77.0.1", "send-queue-depth=256", "receive-queue-depth=32", "receive-buffer-size=64KB",
            "max-inline-data=128B", "poll-batch-size=16", "credit-flow-control=false",
            "completion-queue-mode=per-connection", "idle-strategy=busy-spin", "read-atomic-depth=16",
            "rnr-retry-count=5", "min-rnr-timer=20", "retry-count=2", "signal-interval=4", "ack-timeout-exponent=14",
            "completion-vector=3", "idle-probe-interval=5s", "max-connections=1000", "accept-timeout=2s",
            "shared-receive-queue-depth=512", "shared-receive-queue-group=kv");
    private static final Map<String, String> DATAGRAM = values("datagram",
            "send-queue-depth=256", "receive-queue-depth=32", "poll-batch-size=16",
            "completion-queue-mode=per-connection", "idle-strategy=busy-spin", "connect-timeout=3s",
            "address-handles=64", "peer-refresh=30s");

    @Test
    void everyRdmaOptionHasASpringProperty() throws IOException {
        String metadata = metadata();
        List<String> missing = new ArrayList<>();
        for (RdmaOption<?> o : RdmaOption.ALL) {
            if (SIDES.stream().noneMatch(side -> metadata.contains("\"name\": \"" + property(side, o) + "\""))) {
                missing.add(o.name() + " (none of " + SIDES.stream().map(side -> property(side, o)).toList()
                        + " is in the configuration metadata)");
            }
        }
        assertThat(missing).as("RdmaOptions without a Spring property").isEmpty();
    }

    @Test
    void everyClientPropertyReachesTheClientBean() throws IOException {
        runner().withPropertyValues(pairs(CLIENT)).run(ctx ->
                assertEveryPropertyReached("client", CLIENT, ctx.getBean(RdmaClient.class).configuration()));
    }

    @Test
    void everyDatagramPropertyReachesTheDatagramBean() throws IOException {
        runner().withPropertyValues(pairs(DATAGRAM)).run(ctx ->
                assertEveryPropertyReached("datagram", DATAGRAM, ctx.getBean(RdmaDatagram.class).configuration()));
    }

    /** Without starting a context (starting binds, which needs a device): the server bean's factory method. */
    @Test
    void everyServerPropertyReachesTheServer() throws IOException {
        RdmaProperties properties = new Binder(new MapConfigurationPropertySource(SERVER))
                .bind(RdmaProperties.PREFIX, RdmaProperties.class).get();
        StaticListableBeanFactory beans = new StaticListableBeanFactory();
        beans.addBean("handler", (RdmaConnectionHandler) conn -> Mono.empty());
        RdmaServerLifecycle lifecycle = new RdmaAutoConfiguration.ServerConfiguration().rdmaServer(properties,
                beans.getBeanProvider(RdmaConnectionHandler.class), beans.getBeanProvider(RdmaServerCustomizer.class),
                beans.getBeanProvider(io.reactiverdma.reactive.ConnectionAcceptor.class), beans);
        assertEveryPropertyReached("server", SERVER, lifecycle.configuration().configuration());
    }

    /** The old name of ack-timeout-exponent still binds (deprecated: it was never a duration). */
    @Test
    void theDeprecatedAckTimeoutStillSetsTheExponent() {
        runner().withPropertyValues("reactive-rdma.client.ack-timeout=14").run(ctx -> assertThat(
                ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.ACK_TIMEOUT)).isEqualTo(14));
    }

    private void assertEveryPropertyReached(String side, Map<String, String> set, RdmaTransportConfig c)
            throws IOException {
        String metadata = metadata();
        List<String> notReached = new ArrayList<>();
        for (RdmaOption<?> o : RdmaOption.ALL) {
            String p = property(side, o);
            if (!metadata.contains("\"name\": \"" + p + "\"")) {
                continue;
            }
            if (!set.containsKey(p)) {
                notReached.add(p + " (this test sets no value for it: add one)");
            } else if (java.util.Objects.equals(c.option(o), o.defaultValue())) {
                notReached.add(p + "=" + set.get(p) + " left " + o.name() + " at its default " + o.defaultValue());
            }
        }
        assertThat(notReached).as("properties that do not reach the " + side).isEmpty();
    }

    private static ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class));
    }

    private static String property(String side, RdmaOption<?> o) {
        String name = RENAMED.getOrDefault(o, o.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        return RdmaProperties.PREFIX + "." + side + "." + name;
    }

    private static Map<String, String> values(String side, String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String p : pairs) {
            int eq = p.indexOf('=');
            m.put(RdmaProperties.PREFIX + "." + side + "." + p.substring(0, eq), p.substring(eq + 1));
        }
        return m;
    }

    private static String[] pairs(Map<String, String> m) {
        return m.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).toArray(String[]::new);
    }

    static String metadata() throws IOException {
        try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
