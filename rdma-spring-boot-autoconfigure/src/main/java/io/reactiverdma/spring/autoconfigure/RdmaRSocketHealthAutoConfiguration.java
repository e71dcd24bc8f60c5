package io.reactiverdma.spring.autoconfigure;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code rdmaRSocket} health indicator ({@link RdmaRSocketHealthIndicator}) for the RSocket servers over RDMA,
 * when Spring Boot's health support is on the class path and {@code management.health.rdma.enabled} is not false
 * (one switch for every RDMA indicator).
 */
@AutoConfiguration(after = RdmaRSocketServerAutoConfiguration.class)
@ConditionalOnClass({RdmaRSocketServerLifecycle.class, HealthIndicator.class,
        io.reactiverdma.rsocket.RdmaServerChannel.class})
@ConditionalOnBean(RdmaRSocketServerLifecycle.class)
@ConditionalOnEnabledHealthIndicator("rdma")
public class RdmaRSocketHealthAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean(name = "rdmaRSocketHealthIndicator")
    public RdmaRSocketHealthIndicator rdmaRSocketHealthIndicator(ListableBeanFactory beans) {
        return new RdmaRSocketHealthIndicator(beans.getBeansOfType(RdmaRSocketServerLifecycle.class));
    }
}
