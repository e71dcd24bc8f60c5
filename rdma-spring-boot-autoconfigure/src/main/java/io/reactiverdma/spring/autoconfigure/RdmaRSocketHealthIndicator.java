package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.rsocket.RdmaServerChannel;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * {@code /actuator/health/rdmaRSocket}: UP when every RSocket server over RDMA ({@link RdmaRSocketServerLifecycle}
 * bean) is listening, DOWN otherwise. Details: {@code servers}, per bean name {@code address} and
 * {@code connections}, or {@code not listening}. The devices and their ports are the {@code rdma} indicator's.
 */
public class RdmaRSocketHealthIndicator implements HealthIndicator {
    private final Map<String, RdmaRSocketServerLifecycle> servers;

    /** {@code servers} by bean name. */
    public RdmaRSocketHealthIndicator(Map<String, RdmaRSocketServerLifecycle> servers) {
        this.servers = Map.copyOf(Objects.requireNonNull(servers, "servers"));
    }

    @Override
    public Health health() {
        boolean listening = true;
        Map<String, Object> details = new LinkedHashMap<>();
        for (Map.Entry<String, RdmaRSocketServerLifecycle> e : new TreeMap<>(servers).entrySet()) {
            RdmaServerChannel s = e.getValue().server();
            if (s == null || s.isDisposed()) {
                listening = false;
                details.put(e.getKey(), "not listening");
            } else {
                Map<String, Object> server = new LinkedHashMap<>();
                server.put("address", s.address().getHostString() + ":" + s.address().getPort());
                server.put("connections", s.connectionCount());
                details.put(e.getKey(), server);
            }
        }
        Health.Builder b = new Health.Builder().withDetail("servers", details);
        return (listening ? b.up() : b.down()).build();
    }
}
