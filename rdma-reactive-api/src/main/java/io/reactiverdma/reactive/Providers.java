package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;

import java.util.Iterator;
import java.util.ServiceLoader;

/** Finds the engine once (ServiceLoader), so the API names no engine class. */
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
                    Iterator<RdmaTransportProvider> it = ServiceLoader.load(RdmaTransportProvider.class,
                            Providers.class.getClassLoader()).iterator();
                    if (!it.hasNext()) {
                        throw new RdmaException("no RDMA engine on the class path: add the rdma-reactive-impl "
                                + "module (io.reactiverdma:rdma-reactive-impl) as a runtime dependency");
                    }
                    p = it.next();
                    provider = p;
                }
            }
        }
        return p;
    }
}
