package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code /actuator/health/rdma}. With RDMA servers ({@link RdmaServerLifecycle} beans): UP when some RDMA device
 * has an ACTIVE port and every server is listening, DOWN otherwise. Without a server (a client-only application,
 * which may use RDMA as an option): UP with an ACTIVE port, else UNKNOWN (HTTP 200, and it does not pull the
 * aggregate status down), never DOWN. Details: {@code devices} (each device's ports and their states, from sysfs),
 * {@code reason} when no port is ACTIVE, and {@code servers} (per bean name: {@code address} and
 * {@code connections}, or {@code not listening}).
 */
public class RdmaHealthIndicator implements HealthIndicator {
    private final Path sysfs;
    private final Map<String, RdmaServerLifecycle> servers;

    /** Devices from {@code /sys/class/infiniband}; {@code server} may be null (no server configured). */
    public RdmaHealthIndicator(RdmaServerLifecycle server) {
        this(RdmaDevicePorts.SYSFS, server);
    }

    RdmaHealthIndicator(Path sysfs, RdmaServerLifecycle server) {
        this(sysfs, server == null ? Map.of() : Map.of("rdmaServer", server));
    }

    /** {@code servers} by bean name, empty for none. */
    RdmaHealthIndicator(Path sysfs, Map<String, RdmaServerLifecycle> servers) {
        this.sysfs = Objects.requireNonNull(sysfs, "sysfs");
        this.servers = Map.copyOf(Objects.requireNonNull(servers, "servers"));
    }

    @Override
    public Health health() {
        Map<String, Map<String, String>> devices = RdmaDevicePorts.read(sysfs);
        boolean active = RdmaDevicePorts.anyActive(devices);
        Health.Builder b = new Health.Builder().withDetail("devices", devices);
        if (devices.isEmpty()) {
            b.withDetail("reason", "no RDMA device (" + sysfs + " is empty or missing)");
        } else if (!active) {
            b.withDetail("reason", "no RDMA device has an ACTIVE port");
        }
        if (servers.isEmpty()) {
            return (active ? b.up() : b.status(Status.UNKNOWN)).build();
        }
        boolean listening = true;
        Map<String, Object> details = new LinkedHashMap<>();
        for (Map.Entry<String, RdmaServerLifecycle> e : new java.util.TreeMap<>(servers).entrySet()) {
            DisposableRdmaServer s = e.getValue().server();
            if (s == null || s.isDisposed()) {
                listening = false;
                details.put(e.getKey(), "not listening");
            } else {
                Map<String, Object> server = new LinkedHashMap<>();
                server.put("address", s.host() + ":" + s.port());
                server.put("connections", s.connectionCount());
                details.put(e.getKey(), server);
            }
        }
        b.withDetail("servers", details);
        return (active && listening ? b.up() : b.down()).build();
    }
}
