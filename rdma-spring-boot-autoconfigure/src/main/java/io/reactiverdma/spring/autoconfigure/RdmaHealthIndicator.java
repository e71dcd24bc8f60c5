package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.DisposableRdmaServer;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code /actuator/health/rdma}: UP when some RDMA device has an ACTIVE port and, when the auto-configured server
 * exists, it is listening; DOWN otherwise. Details: {@code devices} (each device's ports and their states, from
 * sysfs) and {@code server} ({@code address} and {@code connections}, or {@code not listening}).
 */
public class RdmaHealthIndicator implements HealthIndicator {
    private final Path sysfs;
    private final RdmaServerLifecycle server;

    /** Devices from {@code /sys/class/infiniband}; {@code server} may be null (no server configured). */
    public RdmaHealthIndicator(RdmaServerLifecycle server) {
        this(RdmaDevicePorts.SYSFS, server);
    }

    RdmaHealthIndicator(Path sysfs, RdmaServerLifecycle server) {
        this.sysfs = Objects.requireNonNull(sysfs, "sysfs");
        this.server = server;
    }

    @Override
    public Health health() {
        Map<String, Map<String, String>> devices = RdmaDevicePorts.read(sysfs);
        boolean up = RdmaDevicePorts.anyActive(devices);
        Health.Builder b = new Health.Builder().withDetail("devices", devices);
        if (devices.isEmpty()) {
            b.withDetail("reason", "no RDMA device (" + sysfs + " is empty or missing)");
        } else if (!up) {
            b.withDetail("reason", "no RDMA device has an ACTIVE port");
        }
        if (server != null) {
            DisposableRdmaServer s = server.server();
            if (s == null || s.isDisposed()) {
                up = false;
                b.withDetail("server", "not listening");
            } else {
                Map<String, Object> details = new LinkedHashMap<>();
                details.put("address", s.host() + ":" + s.port());
                details.put("connections", s.connectionCount());
                b.withDetail("server", details);
            }
        }
        return (up ? b.up() : b.down()).build();
    }
}
