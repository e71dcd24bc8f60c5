package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rdma} health indicator ({@link RdmaHealthIndicator}) when Spring Boot's health support is on the
 * class path (Actuator) and {@code management.health.rdma.enabled} is not false.
 */
@AutoConfiguration(after = RdmaAutoConfiguration.class)
@ConditionalOnClass({RdmaClient.class, HealthIndicator.class})
@ConditionalOnEnabledHealthIndicator("rdma")
public class RdmaHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "rdmaHealthIndicator")
    public RdmaHealthIndicator rdmaHealthIndicator(ObjectProvider<RdmaServerLifecycle> server) {
        return new RdmaHealthIndicator(server.getIfAvailable());
    }
}
