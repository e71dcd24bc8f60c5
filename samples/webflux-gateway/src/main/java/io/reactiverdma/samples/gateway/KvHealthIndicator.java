package io.reactiverdma.samples.gateway;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * {@code /actuator/health} component "kv": what the gateway's connection to the key-value server is now,
 * without dialling (a probe never starts a connection attempt, and answers at once): UP while the
 * connection is open; DOWN otherwise, with the last failure's message and when the next attempt is due (the
 * gateway reconnects by itself, with backoff).
 */
@Component("kv")
public class KvHealthIndicator implements ReactiveHealthIndicator {
    private final KvGateway gateway;

    public KvHealthIndicator(KvGateway gateway) {
        this.gateway = gateway;
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(() -> {
            if (gateway.isConnected()) {
                return Health.up().withDetail("server", gateway.serverAddress()).withDetail("connection", "open")
                        .build();
            }
            Health.Builder down = Health.down().withDetail("server", gateway.serverAddress())
                    .withDetail("connection", gateway.isRunning() ? "none" : "stopped")
                    .withDetail("nextAttemptInMs", gateway.nextAttemptIn().toMillis());
            Throwable why = gateway.lastFailure();
            if (why != null) {
                down.withDetail("lastFailure", String.valueOf(why.getMessage()));
            }
            return down.build();
        });
    }
}
