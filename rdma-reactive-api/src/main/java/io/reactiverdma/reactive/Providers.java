package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;

import java.util.Comparator;
import java.util.ServiceLoader;

/**
 * Finds the engine once (ServiceLoader), so the API names no engine class: of several, the highest
 * {@link RdmaTransportProvider#priority()}, then the first class name.
 */
final class Providers {
    private static volatile RdmaTransportProvider provider;

    private Providers() {
    }

    static RdmaTransportProvider provider() {
        RdmaTransportProvider p = provider;
        if (p == null) {
            synchronized (Providers.class) {
                p = provider;
                if (p == null) {
                    p = choose(ServiceLoader.load(RdmaTransportProvider.class, Providers.class.getClassLoader()));
                    provider = p;
                }
            }
        }
        return p;
    }

    /** The provider to use of {@code found}: the highest priority, then the first class name. */
    static RdmaTransportProvider choose(Iterable<RdmaTransportProvider> found) {
        RdmaTransportProvider best = null;
        Comparator<RdmaTransportProvider> order = Comparator.comparingInt(RdmaTransportProvider::priority).reversed()
                .thenComparing(p -> p.getClass().getName());
        for (RdmaTransportProvider p : found) {
            if (best == null || order.compare(p, best) < 0) {
                best = p;
            }
        }
        if (best == null) {
            throw new RdmaException("no RDMA engine on the class path: add the rdma-reactive-impl "
                    + "module (io.reactiverdma:rdma-reactive-impl) as a runtime dependency");
        }
        return best;
    }
}
