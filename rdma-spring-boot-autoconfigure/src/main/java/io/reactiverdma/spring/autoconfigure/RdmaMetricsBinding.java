package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaServer;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;

import java.util.Objects;

/**
 * Puts the engine's meters into the application's registry. The engine records them, when a client or
 * server has {@code metrics(true)}, in Micrometer's global registry (as Reactor Netty does), which passes
 * every meter, those registered before too, on to the registries added to it. So this switches metrics on
 * for the auto-configured client and server and adds the application's registry to the global one, unless
 * it is there already (Spring Boot adds it when {@code management.metrics.use-global-registry} is true, the
 * default). On shutdown it takes out again only what it added.
 */
public class RdmaMetricsBinding implements RdmaClientCustomizer, RdmaServerCustomizer, InitializingBean,
        DisposableBean {
    private final MeterRegistry registry;
    private boolean addedToGlobal;

    public RdmaMetricsBinding(MeterRegistry registry) {
        this.registry = Objects.requireNonNull(registry, "registry");
    }

    /** The registry the engine's meters show in. */
    public MeterRegistry registry() {
        return registry;
    }

    @Override
    public void afterPropertiesSet() {
        if (registry != Metrics.globalRegistry && !Metrics.globalRegistry.getRegistries().contains(registry)) {
            Metrics.addRegistry(registry);
            addedToGlobal = true;
        }
    }

    @Override
    public void destroy() {
        if (addedToGlobal) {
            Metrics.removeRegistry(registry);
            addedToGlobal = false;
        }
    }

    @Override
    public RdmaClient customize(RdmaClient client) {
        return client.metrics(true);
    }

    @Override
    public RdmaServer customize(RdmaServer server) {
        return server.metrics(true);
    }
}
