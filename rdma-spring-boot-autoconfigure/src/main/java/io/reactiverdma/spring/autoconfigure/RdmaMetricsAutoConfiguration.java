package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/**
 * Micrometer for the auto-configured client and server: the engine's meters ({@code rdma.*}) in the
 * application's {@link MeterRegistry} ({@link RdmaMetricsBinding}; {@code reactive-rdma.metrics}), and
 * Observations around connect and accept in its {@link ObservationRegistry} ({@code reactive-rdma.observations}).
 * After Actuator's registry and observation auto-configurations (named, so they stay optional), so their beans
 * are seen.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration"})
@ConditionalOnClass(RdmaClient.class)
@EnableConfigurationProperties(RdmaProperties.class)
public class RdmaMetricsAutoConfiguration {
    /**
     * The order of the customizers here: first of all, so that an application's own customizer (unordered, or
     * ordered anywhere after this) runs later and wins, e.g. when it sets its own observer or recorder.
     */
    public static final int CUSTOMIZER_ORDER = Ordered.HIGHEST_PRECEDENCE;

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnProperty(prefix = RdmaProperties.PREFIX, name = "metrics", havingValue = "true", matchIfMissing = true)
    static class Meters {
        @Bean
        @Order(CUSTOMIZER_ORDER)
        public RdmaMetricsBinding rdmaMetricsBinding(MeterRegistry registry, RdmaProperties properties) {
            return new RdmaMetricsBinding(registry, properties.getMetricsRemoteAddressTags());
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(ObservationRegistry.class)
    @ConditionalOnBean(ObservationRegistry.class)
    @ConditionalOnProperty(prefix = RdmaProperties.PREFIX, name = "observations", havingValue = "true",
            matchIfMissing = true)
    static class Observations {
        @Bean
        @Order(CUSTOMIZER_ORDER)
        public RdmaClientCustomizer rdmaClientObservations(ObservationRegistry registry) {
            return client -> client.observer(MicrometerRdmaObserver.of(registry));
        }

        @Bean
        @Order(CUSTOMIZER_ORDER)
        public RdmaServerCustomizer rdmaServerObservations(ObservationRegistry registry) {
            return server -> server.observer(MicrometerRdmaObserver.of(registry));
        }
    }
}
