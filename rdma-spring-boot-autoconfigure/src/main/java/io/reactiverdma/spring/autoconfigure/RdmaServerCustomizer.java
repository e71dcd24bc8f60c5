package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaServer;

/**
 * Changes the auto-configured {@link RdmaServer} after the properties and the handler are applied, before it
 * binds. The server is immutable: return the changed one. Customizers run in
 * {@link org.springframework.core.Ordered} order.
 */
@FunctionalInterface
public interface RdmaServerCustomizer {
    RdmaServer customize(RdmaServer server);
}
