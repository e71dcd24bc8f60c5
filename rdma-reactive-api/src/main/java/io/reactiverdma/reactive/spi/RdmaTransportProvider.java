package io.reactiverdma.reactive.spi;

import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.RdmaDatagramConfig;
import io.reactiverdma.reactive.RdmaServerConfig;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.function.Function;

/**
 * The engine behind {@link io.reactiverdma.reactive.RdmaClient} and {@link io.reactiverdma.reactive.RdmaServer},
 * found with {@link java.util.ServiceLoader} (the {@code rdma-reactive-impl} module provides one). Users do
 * not call it.
 *
 * <p>When several are on the class path, the API uses the one of the highest {@link #priority()}, and of
 * equal priorities the one whose class name sorts first, so the choice never depends on class-path order.
 */
public interface RdmaTransportProvider {
    /**
     * This provider's rank when several are on the class path: the highest wins. The engine's is 0; a
     * test-support provider that hands over to the engine when not in use (rdma-test's) ranks higher.
     */
    default int priority() {
        return 0;
    }

    /** Connects as {@link io.reactiverdma.reactive.RdmaClient#connect()} documents. */
    Mono<RdmaConnection> connect(RdmaClientConfig config);

    /** Binds as {@link io.reactiverdma.reactive.RdmaServer#bind()} documents. */
    Mono<DisposableRdmaServer> bind(RdmaServerConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler);

    /** A device's memory, as {@link io.reactiverdma.reactive.RdmaResources#memory(String)} documents. */
    Mono<io.reactiverdma.reactive.RdmaMemory> memory(String addressOrDevice);

    /** Opens a datagram endpoint as {@link io.reactiverdma.reactive.RdmaDatagram#bind()} documents. */
    default Mono<io.reactiverdma.reactive.RdmaDatagramEndpoint> bindDatagram(RdmaDatagramConfig config) {
        return Mono.error(new UnsupportedOperationException(getClass().getName() + " does not support datagrams"));
    }

    /** The devices' events, as {@link io.reactiverdma.reactive.RdmaResources#deviceEvents()} documents. */
    Flux<DeviceEvent> deviceEvents();

    /** Releases everything, as {@link io.reactiverdma.reactive.RdmaResources#disposeLater()} documents. */
    Mono<Void> shutdown();
}
