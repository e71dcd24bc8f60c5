package io.reactiverdma.samples.gateway;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * The WebFlux gateway: HTTP endpoints ({@link KvController}) in front of the key-value sample's server,
 * reached over RDMA. No RDMA wiring here: the {@code RdmaClient} bean comes from the auto-configuration
 * (rdma-spring-boot-autoconfigure) and its {@code reactive-rdma.client.*} properties (application.yml, or
 * {@code --reactive-rdma.client.host=...} on the command line).
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class GatewayApplication {
    public static void main(String[] args) {
        SpringApplication.run(GatewayApplication.class, args);
    }
}
