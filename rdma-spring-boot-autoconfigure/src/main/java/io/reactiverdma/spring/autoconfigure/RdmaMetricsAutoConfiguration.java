package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactiverdma.reactive.RdmaClient;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * The engine's meters ({@code rdma.*}) in the application's {@link MeterRegistry}, when there is one and
 * {@code reactive-rdma.metrics} is not false: see {@link RdmaMetricsBinding}. After Actuator's registry
 * auto-configuration (named, so Actuator stays optional), so its registry is seen.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration"})
@ConditionalOnClass({RdmaClient.class, MeterRegistry.class})
@ConditionalOnBean(MeterRegistry.class)
@ConditionalOnProperty(prefix = RdmaProperties.PREFIX, name = "metrics", havingValue = "true", matchIfMissing = true)
public class RdmaMetricsAutoConfiguration {

    @Bean
    public RdmaMetricsBinding rdmaMetricsBinding(MeterRegistry registry) {
        return new RdmaMetricsBinding(registry);
    }
}
