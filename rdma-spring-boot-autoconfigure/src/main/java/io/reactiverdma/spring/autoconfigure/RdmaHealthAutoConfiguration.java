package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rdma} health indicator ({@link RdmaHealthIndicator}) when Spring Boot's health support is on the
 * class path (Actuator) and {@code management.health.rdma.enabled} is not false; it reports every
 * {@link RdmaServerLifecycle} bean.
 */
@AutoConfiguration(after = RdmaAutoConfiguration.class)
@ConditionalOnClass({RdmaClient.class, HealthIndicator.class})
@ConditionalOnEnabledHealthIndicator("rdma")
public class RdmaHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "rdmaHealthIndicator")
    public RdmaHealthIndicator rdmaHealthIndicator(ListableBeanFactory beans) {
        // Every server bean, by name: two servers are a normal application, not a reason to fail the start.
        return new RdmaHealthIndicator(RdmaDevicePorts.SYSFS, beans.getBeansOfType(RdmaServerLifecycle.class));
    }
}
