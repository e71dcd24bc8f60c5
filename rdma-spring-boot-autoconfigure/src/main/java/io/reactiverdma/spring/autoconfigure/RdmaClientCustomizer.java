package io.reactiverdma.spring.autoconfigure;

import io.reactiverdma.reactive.RdmaClient;

/**
 * Changes the auto-configured {@link RdmaClient} after the properties are applied (for what properties
 * cannot say, such as a callback scheduler). The client is immutable: return the changed one. Customizers
 * run in {@link org.springframework.core.Ordered} order.
 */
@FunctionalInterface
public interface RdmaClientCustomizer {
    RdmaClient customize(RdmaClient client);
}
