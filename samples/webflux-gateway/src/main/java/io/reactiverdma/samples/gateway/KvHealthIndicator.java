package io.reactiverdma.samples.gateway;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * {@code /actuator/health} component "kv": UP with the server's address while the RDMA connection to the
 * key-value server is open; otherwise it tries to connect (so health checks also bring a lost connection
 * back) and is DOWN with the error when that fails. Non-blocking, like the endpoints.
 */
@Component("kv")
public class KvHealthIndicator implements ReactiveHealthIndicator {
    private static final Duration LIMIT = Duration.ofSeconds(15);
    private final KvGateway gateway;

    public KvHealthIndicator(KvGateway gateway) {
        this.gateway = gateway;
    }

    @Override
    public Mono<Health> health() {
        return gateway.client()
                .timeout(LIMIT)
                .map(kv -> Health.up().withDetail("server", gateway.serverAddress()).withDetail("connection", "open").build())
                .onErrorResume(e -> Mono.just(Health.down(e).withDetail("server", gateway.serverAddress())
                        .withDetail("connection", "none").build()));
    }
}
