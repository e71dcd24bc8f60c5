package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMetricsRecorder;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.ClassPathResource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration on the host (no RDMA device needed: creating a client connects nothing, and every
 * server case here fails or backs off before binding).
 */
class RdmaAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RdmaAutoConfiguration.class, RdmaMetricsAutoConfiguration.class));

    @Test
    void withoutPropertiesTheClientHasTheApiDefaultsAndThereIsNoServer() {
        runner.run(ctx -> {
            assertThat(ctx).hasSingleBean(RdmaClient.class).doesNotHaveBean(DisposableRdmaServer.class)
                    .doesNotHaveBean(RdmaMetricsBinding.class);
            RdmaTransportConfig c = ctx.getBean(RdmaClient.class).configuration();
            assertThat(c.host()).isNull();
            assertThat(c.port()).isEqualTo(RdmaTransportConfig.DEFAULT_PORT);
            assertThat(c.metrics()).isFalse();
            // The property defaults are literals (so the configuration metadata shows them): they must be the API's.
            for (RdmaOption<?> o : RdmaOption.ALL) {
                assertThat((Object) c.option(o)).as(o.name()).isEqualTo(o.defaultValue());
            }
        });
    }

    @Test
    void everyClientPropertyReachesTheClient() {
        runner.withPropertyValues(
                "reactive-rdma.client.host=10.77.0.1",
                "reactive-rdma.client.port=9000",
                "reactive-rdma.client.connect-timeout=2500ms",
                "reactive-rdma.client.send-queue-depth=256",
                "reactive-rdma.client.receive-queue-depth=32",
                "reactive-rdma.client.receive-buffer-size=64KB",
                "reactive-rdma.client.max-inline-data=128B",
                "reactive-rdma.client.poll-batch-size=16",
                "reactive-rdma.client.credit-flow-control=false",
                "reactive-rdma.client.completion-queue-mode=per-connection",
                "reactive-rdma.client.idle-strategy=backoff",
                "reactive-rdma.client.backoff.max-spins=100",
                "reactive-rdma.client.backoff.max-yields=7",
                "reactive-rdma.client.backoff.min-park-period=2us",
                "reactive-rdma.client.backoff.max-park-period=3ms",
                "reactive-rdma.client.read-atomic-depth=16",
                "reactive-rdma.client.rnr-retry-count=5",
                "reactive-rdma.client.retry-count=2",
                "reactive-rdma.client.ack-timeout-exponent=14",
                "reactive-rdma.client.completion-vector=3",
                "reactive-rdma.client.idle-probe-interval=5s",
                "reactive-rdma.client.type-of-service=96",
                "reactive-rdma.client.local-address=10.77.0.2")
                .run(ctx -> {
                    RdmaTransportConfig c = ctx.getBean(RdmaClient.class).configuration();
                    assertThat(c.host()).isEqualTo("10.77.0.1");
                    assertThat(c.port()).isEqualTo(9000);
                    assertThat(c.option(RdmaOption.CONNECT_TIMEOUT)).isEqualTo(Duration.ofMillis(2500));
                    assertThat(c.option(RdmaOption.SEND_QUEUE_DEPTH)).isEqualTo(256);
                    assertThat(c.option(RdmaOption.RECEIVE_QUEUE_DEPTH)).isEqualTo(32);
                    assertThat(c.option(RdmaOption.RECEIVE_BUFFER_SIZE)).isEqualTo(64 * 1024);
                    assertThat(c.option(RdmaOption.MAX_INLINE_DATA)).isEqualTo(128);
                    assertThat(c.option(RdmaOption.POLL_BATCH_SIZE)).isEqualTo(16);
                    assertThat(c.option(RdmaOption.CREDIT_FLOW_CONTROL)).isFalse();
                    assertThat(c.option(RdmaOption.COMPLETION_QUEUE_MODE)).isEqualTo(CompletionQueueMode.PER_CONNECTION);
                    assertThat(c.option(RdmaOption.IDLE_STRATEGY))
                            .isEqualTo(PollerIdleStrategy.backoff(100, 7, 2_000, 3_000_000));
                    assertThat(c.option(RdmaOption.READ_ATOMIC_DEPTH)).isEqualTo(16);
                    assertThat(c.option(RdmaOption.RNR_RETRY_COUNT)).isEqualTo(5);
                    assertThat(c.option(RdmaOption.RETRY_COUNT)).isEqualTo(2);
                    assertThat(c.option(RdmaOption.ACK_TIMEOUT)).isEqualTo(14);
                    assertThat(c.option(RdmaOption.COMPLETION_VECTOR)).isEqualTo(3);
                    assertThat(c.option(RdmaOption.IDLE_PROBE_INTERVAL)).isEqualTo(Duration.ofSeconds(5));
                    assertThat(c.option(RdmaOption.TYPE_OF_SERVICE)).isEqualTo(96);
                    assertThat(c.option(RdmaOption.LOCAL_ADDRESS)).isEqualTo("10.77.0.2");
                });
    }

    /** Without starting a context (starting binds, which needs a device): the server bean's factory method. */
    @Test
    void theServersAdmissionAndShutdownPropertiesAndItsAcceptorBeanReachTheServer() {
        io.reactiverdma.reactive.ConnectionAcceptor acceptor = r -> Mono.empty();
        org.springframework.beans.factory.support.StaticListableBeanFactory beans =
                new org.springframework.beans.factory.support.StaticListableBeanFactory();
        beans.addBean("handler", (RdmaConnectionHandler) conn -> Mono.empty());
        beans.addBean("acceptor", acceptor);
        RdmaProperties properties = new RdmaProperties();
        properties.getServer().setEnabled(true);
        properties.getServer().setHost("10.77.0.1");
        properties.getServer().setMaxConnections(1000);
        properties.getServer().setAcceptTimeout(Duration.ofSeconds(2));
        properties.getServer().setAckTimeoutExponent(16);
        properties.getServer().setCompletionVector(2);
        properties.getServer().setDrainTimeout(Duration.ofSeconds(5));
        RdmaServerLifecycle lifecycle = new RdmaAutoConfiguration.ServerConfiguration().rdmaServer(properties,
                beans.getBeanProvider(RdmaConnectionHandler.class), beans.getBeanProvider(RdmaServerCustomizer.class),
                beans.getBeanProvider(io.reactiverdma.reactive.ConnectionAcceptor.class), beans);
        io.reactiverdma.reactive.RdmaServerConfig c = lifecycle.configuration().configuration();
        assertThat(c.option(RdmaOption.MAX_CONNECTIONS)).isEqualTo(1000);
        assertThat(c.option(RdmaOption.ACCEPT_TIMEOUT)).isEqualTo(Duration.ofSeconds(2));
        assertThat(c.option(RdmaOption.ACK_TIMEOUT)).isEqualTo(16);
        assertThat(c.option(RdmaOption.COMPLETION_VECTOR)).isEqualTo(2);
        assertThat(c.acceptor()).isSameAs(acceptor);
    }

    /** Two acceptors, neither primary: failing open (accepting everyone) would be the worst reading of it. */
    @Test
    void twoAcceptorBeansFailTheStartInsteadOfTurningAdmissionOff() {
        runner.withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                .withBean("allowList", io.reactiverdma.reactive.ConnectionAcceptor.class, () -> r -> Mono.empty())
                .withBean("authentication", io.reactiverdma.reactive.ConnectionAcceptor.class, () -> r -> Mono.empty())
                .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1")
                .run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo("reactive-rdma.server.enabled");
                    assertThat(e.getMessage()).contains("at most one ConnectionAcceptor bean")
                            .contains("allowList").contains("authentication");
                });
    }

    @Test
    void ofTwoAcceptorBeansThePrimaryOneAdmits() {
        io.reactiverdma.reactive.ConnectionAcceptor primary = r -> Mono.empty();
        org.springframework.beans.factory.support.DefaultListableBeanFactory beans =
                new org.springframework.beans.factory.support.DefaultListableBeanFactory();
        beans.registerSingleton("handler", (RdmaConnectionHandler) conn -> Mono.empty());
        org.springframework.beans.factory.support.RootBeanDefinition p =
                new org.springframework.beans.factory.support.RootBeanDefinition(
                        io.reactiverdma.reactive.ConnectionAcceptor.class, () -> primary);
        p.setPrimary(true);
        beans.registerBeanDefinition("primary", p);
        beans.registerBeanDefinition("other", new org.springframework.beans.factory.support.RootBeanDefinition(
                io.reactiverdma.reactive.ConnectionAcceptor.class, () -> r -> Mono.empty()));
        RdmaProperties properties = new RdmaProperties();
        properties.getServer().setHost("10.77.0.1");
        RdmaServerLifecycle lifecycle = new RdmaAutoConfiguration.ServerConfiguration().rdmaServer(properties,
                beans.getBeanProvider(RdmaConnectionHandler.class), beans.getBeanProvider(RdmaServerCustomizer.class),
                beans.getBeanProvider(io.reactiverdma.reactive.ConnectionAcceptor.class), beans);
        assertThat(lifecycle.configuration().configuration().acceptor()).isSameAs(primary);
    }

    @Test
    void busySpinIsSelectable() {
        runner.withPropertyValues("reactive-rdma.client.idle-strategy=busy-spin").run(ctx -> assertThat(
                ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.IDLE_STRATEGY))
                .isEqualTo(PollerIdleStrategy.busySpin()));
    }

    @Test
    void eventDrivenSpinPollsSetTheEventDrivenPollersSpin() {
        assertThat(new RdmaProperties.Client().getEventDrivenSpinPolls())
                .as("the property's default is the API's").isEqualTo(PollerIdleStrategy.DEFAULT_SPIN_POLLS);
        runner.run(ctx -> assertThat(ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.IDLE_STRATEGY))
                .isEqualTo(PollerIdleStrategy.eventDriven()));
        runner.withPropertyValues("reactive-rdma.client.event-driven-spin-polls=0").run(ctx -> assertThat(
                ctx.getBean(RdmaClient.class).configuration().option(RdmaOption.IDLE_STRATEGY))
                .isEqualTo(PollerIdleStrategy.eventDriven(0)));
    }

    @Test
    void aNegativeEventDrivenSpinIsRefusedNamingTheProperty() {
        runner.withPropertyValues("reactive-rdma.client.event-driven-spin-polls=-1").run(ctx -> {
            InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
            assertThat(e.getName()).isEqualTo("reactive-rdma.client.event-driven-spin-polls");
            assertThat(e.getMessage()).contains("spinPolls must be >= 0, got -1");
        });
    }

    @Test
    void anApplicationsOwnClientBeanWins() {
        RdmaClient own = RdmaClient.create().host("192.0.2.1");
        runner.withBean(RdmaClient.class, () -> own).withPropertyValues("reactive-rdma.client.host=10.77.0.1")
                .run(ctx -> assertThat(ctx).getBean(RdmaClient.class).isSameAs(own));
    }

    @Test
    void customizersChangeTheClientAfterTheProperties() {
        Scheduler callbacks = Schedulers.immediate();
        runner.withBean(RdmaClientCustomizer.class, () -> c -> c.callbackScheduler(callbacks))
                .withPropertyValues("reactive-rdma.client.port=9001")
                .run(ctx -> {
                    RdmaTransportConfig c = ctx.getBean(RdmaClient.class).configuration();
                    assertThat(c.callbackScheduler()).isSameAs(callbacks);
                    assertThat(c.port()).isEqualTo(9001);
                });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', value = {
            "reactive-rdma.client.receive-buffer-size | 4B         | option RECEIVE_BUFFER_SIZE must be 8..4194304, got 4",
            "reactive-rdma.client.receive-buffer-size | 3GB        | too large",
            "reactive-rdma.client.rnr-retry-count     | 7          | option RNR_RETRY_COUNT must be 0..6, got 7",
            "reactive-rdma.client.send-queue-depth    | 0          | option SEND_QUEUE_DEPTH must be 1..16384, got 0",
            "reactive-rdma.client.max-inline-data     | 1KB        | option MAX_INLINE_DATA must be 0..256, got 1024",
            "reactive-rdma.client.connect-timeout     | 0ms        | option CONNECT_TIMEOUT must be a duration from 1 ms",
            "reactive-rdma.client.port                | 70000      | port must be 0..65535, got 70000",
            "reactive-rdma.client.port                | 0          | a client connects to a server's port: 1..65535, got 0",
            "reactive-rdma.client.host                | ' '        | host is blank",
            "reactive-rdma.server.retry-count         | 8          | option RETRY_COUNT must be 0..7, got 8",
            "reactive-rdma.server.max-connections     | 0          | option MAX_CONNECTIONS must be 1..2147483647, got 0",
            "reactive-rdma.server.accept-timeout      | 0s         | option ACCEPT_TIMEOUT must be a duration from 1 ms",
            "reactive-rdma.server.drain-timeout       | -1s        | must be 0 or a positive duration",
            "reactive-rdma.client.ack-timeout-exponent | 32        | option ACK_TIMEOUT must be 0..31, got 32",
            "reactive-rdma.client.type-of-service     | 256        | option TYPE_OF_SERVICE must be -1..255, got 256",
    })
    void aRefusedValueFailsTheStartNamingTheProperty(String property, String value, String reason) {
        ApplicationContextRunner r = runner.withPropertyValues(property + "=" + value);
        if (property.startsWith("reactive-rdma.server.")) {
            // Refused before binding: no device needed.
            r = r.withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                    .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1");
        }
        r.run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo(property);
                    assertThat(e.getMessage()).contains(property).contains(reason);
                });
    }

    @Test
    void backoffParkPeriodsOutOfOrderNameTheBackoffGroup() {
        runner.withPropertyValues("reactive-rdma.client.idle-strategy=backoff",
                        "reactive-rdma.client.backoff.min-park-period=2ms",
                        "reactive-rdma.client.backoff.max-park-period=1ms")
                .run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo("reactive-rdma.client.backoff");
                    assertThat(e.getMessage()).contains("1 <= minParkPeriodNs <= maxParkPeriodNs");
                });
    }

    @Test
    void aValueOfTheWrongTypeFailsInBindingNamingTheProperty() {
        runner.withPropertyValues("reactive-rdma.client.completion-queue-mode=sometimes").run(ctx -> {
            assertThat(ctx).hasFailed();
            BindException e = findCause(ctx.getStartupFailure(), BindException.class);
            assertThat(e.getName()).hasToString("reactive-rdma.client.completion-queue-mode");
        });
    }

    @Test
    void theServerExistsOnlyWhenEnabled() {
        // With a handler and a host but not enabled: no server, so nothing tries to bind.
        runner.withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                .withPropertyValues("reactive-rdma.server.host=10.77.0.1")
                .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(DisposableRdmaServer.class)
                        .doesNotHaveBean(RdmaServerLifecycle.class));
    }

    @Test
    void anEnabledServerWithoutAHandlerFailsNamingTheEnabledFlag() {
        runner.withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1")
                .run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo("reactive-rdma.server.enabled");
                    assertThat(e.getMessage()).contains("RdmaConnectionHandler");
                });
    }

    @Test
    void anEnabledServerWithoutAHostFailsNamingTheHost() {
        runner.withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                .withPropertyValues("reactive-rdma.server.enabled=true")
                .run(ctx -> assertThat(invalidProperty(ctx).getName()).isEqualTo("reactive-rdma.server.host"));
    }

    @Test
    void aBindTimeoutThatIsNotPositiveFailsNamingIt() {
        runner.withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1",
                        "reactive-rdma.server.bind-timeout=0s")
                .run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo("reactive-rdma.server.bind-timeout");
                    assertThat(e.getMessage()).contains("must be a positive duration");
                });
    }

    @Test
    void anApplicationsOwnServerBeanWins() {
        DisposableRdmaServer own = new NotListeningServer();
        runner.withBean(DisposableRdmaServer.class, () -> own)
                .withBean(RdmaConnectionHandler.class, () -> conn -> Mono.empty())
                .withPropertyValues("reactive-rdma.server.enabled=true", "reactive-rdma.server.host=10.77.0.1")
                .run(ctx -> assertThat(ctx).getBean(DisposableRdmaServer.class).isSameAs(own));
    }

    @Test
    void withAMeterRegistryTheEngineMetersGoToItAndTheGlobalRegistryIsUntouched() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<MeterRegistry> globalsBefore = List.copyOf(Metrics.globalRegistry.getRegistries());
        runner.withBean(MeterRegistry.class, () -> registry).run(ctx -> {
            RdmaTransportConfig c = ctx.getBean(RdmaClient.class).configuration();
            assertThat(c.metrics()).isTrue();
            // What the engine does with the client's recorder when a connection on rxe0 is set up and sends.
            RdmaMetricsRecorder recorder = c.metricsRecorder().get();
            assertThat(recorder).isSameAs(MicrometerRdmaRecorder.of(registry));
            recorder.connectionsChanged("rxe0", null, 1);
            recorder.recordOperation("rxe0", null, OperationType.SEND, RdmaMetricsRecorder.Outcome.SUCCESS, 1_000, 64);
            assertThat(registry.get("rdma.connections").tag("device", "rxe0").gauge().value()).isEqualTo(1.0);
            assertThat(registry.get("rdma.bytes").tags("device", "rxe0", "op", "send").counter().count())
                    .isEqualTo(64.0);
            assertThat(List.copyOf(Metrics.globalRegistry.getRegistries())).isEqualTo(globalsBefore);
            assertThat(Metrics.globalRegistry.find("rdma.connections").meters()).isEmpty();
        });
        assertThat(List.copyOf(Metrics.globalRegistry.getRegistries())).isEqualTo(globalsBefore);
    }

    @Test
    void remoteAddressTagsAreAPropertyAndABadCapFailsNamingIt() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        runner.withBean(MeterRegistry.class, () -> registry)
                .withPropertyValues("reactive-rdma.metrics-remote-address-tags=3")
                .run(ctx -> assertThat(((MicrometerRdmaRecorder) ctx.getBean(RdmaClient.class).configuration()
                        .metricsRecorder().get()).maxRemoteAddressTags()).isEqualTo(3));
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withPropertyValues("reactive-rdma.metrics-remote-address-tags=-1")
                .run(ctx -> {
                    InvalidConfigurationPropertyValueException e = invalidProperty(ctx);
                    assertThat(e.getName()).isEqualTo("reactive-rdma.metrics-remote-address-tags");
                    assertThat(e.getMessage()).contains("must be 0..10000, got -1");
                });
    }

    @Test
    void withAnObservationRegistryConnectsAreObservedUnlessSwitchedOff() {
        ObservationRegistry observations = ObservationRegistry.create();
        runner.withBean(ObservationRegistry.class, () -> observations)
                .run(ctx -> assertThat(ctx.getBean(RdmaClient.class).configuration().observer())
                        .isInstanceOf(MicrometerRdmaObserver.class));
        runner.withBean(ObservationRegistry.class, () -> observations)
                .withPropertyValues("reactive-rdma.observations=false")
                .run(ctx -> assertThat(ctx.getBean(RdmaClient.class).configuration().observer()).isNull());
        runner.run(ctx -> assertThat(ctx.getBean(RdmaClient.class).configuration().observer()).isNull());
    }

    /** The auto-configured customizers run first, so an application's own (unordered) customizer wins. */
    @Test
    void anApplicationsCustomizerWinsOverTheAutoConfiguredObserverAndRecorder() {
        io.reactiverdma.reactive.RdmaConnectionObserver mine = (side, remote, context) -> null;
        RdmaMetricsRecorder myRecorder = MicrometerRdmaRecorder.of(new SimpleMeterRegistry());
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withBean(RdmaClientCustomizer.class, () -> c -> c.observer(mine).metrics(true, () -> myRecorder))
                .run(ctx -> {
                    io.reactiverdma.reactive.RdmaClientConfig c = ctx.getBean(RdmaClient.class).configuration();
                    assertThat(c.observer()).isSameAs(mine);
                    assertThat(c.metricsRecorder().get()).isSameAs(myRecorder);
                });
    }

    /** An application that brings its own RDMA beans excludes the main auto-configuration; Actuator stays. */
    @Test
    void theMetricsAutoConfigurationStartsWithoutTheMainOne() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RdmaMetricsAutoConfiguration.class))
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(RdmaMetricsBinding.class));
    }

    @Test
    void aBadRemoteAddressTagCapFailsEvenWithoutAMeterRegistry() {
        runner.withPropertyValues("reactive-rdma.metrics-remote-address-tags=-1").run(ctx ->
                assertThat(invalidProperty(ctx).getName()).isEqualTo("reactive-rdma.metrics-remote-address-tags"));
    }

    @Test
    void metricsCanBeSwitchedOff() {
        runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).withPropertyValues("reactive-rdma.metrics=false")
                .run(ctx -> {
                    assertThat(ctx).doesNotHaveBean(RdmaMetricsBinding.class);
                    assertThat(ctx.getBean(RdmaClient.class).configuration().metrics()).isFalse();
                });
    }

    @Test
    void theConfigurationMetadataDescribesThePropertiesWithTheirDefaults() throws IOException {
        String json;
        try (InputStream in = new ClassPathResource("META-INF/spring-configuration-metadata.json").getInputStream()) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(json).contains("\"name\": \"reactive-rdma.client.receive-buffer-size\"")
                .contains("\"name\": \"reactive-rdma.server.rnr-retry-count\"")
                .contains("\"name\": \"reactive-rdma.client.backoff.max-park-period\"")
                .contains("\"name\": \"reactive-rdma.server.enabled\"")
                .contains("\"defaultValue\": \"4096B\"")
                .contains("\"defaultValue\": \"10s\"");
    }

    /**
     * The RSocket server's port starts it: unset is "no server", so the metadata (what an IDE shows) must not give
     * it a default, and must say so. Before, it showed the inherited "default 7471" and the endpoint's generic text.
     * The other ports keep the API's default, and the RSocket server's old ack-timeout name its replacement.
     */
    @Test
    void theMetadataSaysTheRSocketServersPortStartsItAndHasNoDefault() throws IOException {
        String rsocketPort = metadataEntry("reactive-rdma.rsocket.server.port");
        assertThat(rsocketPort).doesNotContain("defaultValue").contains("starts the RSocket server over RDMA");
        for (String side : List.of("client", "server", "datagram")) {
            assertThat(metadataEntry("reactive-rdma." + side + ".port")).as(side).contains("\"defaultValue\": 7471");
        }
        assertThat(metadataEntry("reactive-rdma.rsocket.server.ack-timeout"))
                .contains("\"replacement\": \"reactive-rdma.rsocket.server.ack-timeout-exponent\"");
    }

    /** The text of one property's entry in the generated metadata (up to the next entry). */
    private static String metadataEntry(String name) throws IOException {
        String json = EveryOptionHasAPropertyTest.metadata();
        String properties = json.substring(json.indexOf("\"properties\": ["), json.indexOf("\"hints\": ["));
        int at = properties.indexOf("\"name\": \"" + name + "\"");
        assertThat(at).as("metadata entry of " + name).isNotNegative();
        int end = properties.indexOf("\"name\": ", at + 1);
        int start = properties.lastIndexOf("{", at);
        return properties.substring(start, end < 0 ? properties.length() : properties.lastIndexOf("{", end));
    }

    private static InvalidConfigurationPropertyValueException invalidProperty(
            org.springframework.boot.test.context.assertj.AssertableApplicationContext ctx) {
        assertThat(ctx).hasFailed();
        return findCause(ctx.getStartupFailure(), InvalidConfigurationPropertyValueException.class);
    }

    static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return type.cast(c);
            }
        }
        throw new AssertionError("no " + type.getSimpleName() + " in the causes of " + t, t);
    }

    /** An application's own server bean, for the back-off test: never listens. */
    private static final class NotListeningServer implements DisposableRdmaServer {
        @Override
        public java.net.InetSocketAddress address() {
            return new java.net.InetSocketAddress("10.77.0.1", 1);
        }

        @Override
        public reactor.core.publisher.Flux<io.reactiverdma.reactive.ConnectionEvent> connectionEvents() {
            return reactor.core.publisher.Flux.empty();
        }

        @Override
        public Mono<Void> disposeGracefully(java.time.Duration timeout) {
            return Mono.fromRunnable(this::dispose).then(onDispose());
        }

        @Override
        public int connectionCount() {
            return 0;
        }

        @Override
        public Mono<Void> onDispose() {
            return Mono.empty();
        }

        @Override
        public void dispose() {
        }
    }
}
