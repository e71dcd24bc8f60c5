package io.reactiverdma.samples.rsocket.client;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.rsocket.RdmaClientTransport;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.messaging.rsocket.RSocketRequester;

/**
 * The calling side of the RSocket sample: an {@link RSocketRequester} from Spring Boot's auto-configured builder,
 * over RDMA or TCP as {@code greeting.transport} says (the one line that differs), and {@link GreetingClient} on it.
 */
@SpringBootApplication
@EnableConfigurationProperties(GreetingClientProperties.class)
public class GreetingClientApplication {
    public static void main(String[] args) {
        SpringApplication.run(GreetingClientApplication.class, args);
    }

    @Bean(destroyMethod = "dispose")
    RSocketRequester greetingRequester(RSocketRequester.Builder builder, GreetingClientProperties p,
            RdmaClient rdmaClient) {
        // rdmaClient: the auto-configured one, so reactive-rdma.client.* (connect-timeout, options) apply.
        return switch (p.getTransport()) {
            case RDMA -> builder.transport(RdmaClientTransport.create(rdmaClient.host(p.getHost()).port(p.getPort())));
            case TCP -> builder.tcp(p.getHost(), p.getPort());
        };
    }

    @Bean
    GreetingClient greetingClient(RSocketRequester greetingRequester) {
        return new GreetingClient(greetingRequester);
    }
}
