package io.reactiverdma.test;

import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.RdmaDatagramConfig;
import io.reactiverdma.reactive.RdmaServerConfig;
import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.Comparator;
import java.util.ServiceLoader;
import java.util.function.Function;

/**
 * The provider rdma-test puts on the class path (found by {@link ServiceLoader}; users do not call it): while
 * a {@link LoopbackRdma} is started, everything goes to its engine; otherwise to the next provider on the
 * class path (the engine on the machine's devices), so a module whose tests use both the loopback and a real
 * device gets each where it asks. It outranks the engine ({@link #priority()}), so it is chosen whatever the
 * class-path order.
 *
 * <p>Each call is routed when it is made (a Mono when it is subscribed): a connection or server keeps the
 * engine it was made on.
 */
public final class LoopbackRdmaProvider implements RdmaTransportProvider {
    /** Above the engine's 0. */
    static final int PRIORITY = 100;

    private volatile RdmaTransportProvider fallback;

    /** For {@link ServiceLoader}. */
    public LoopbackRdmaProvider() {
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** The started loopback's engine, or else the machine's engine, found on first use. */
    private RdmaTransportProvider target() {
        RdmaTransportProvider loopback = DefaultLoopbackRdma.activeEngine();
        return loopback != null ? loopback : fallback();
    }

    private RdmaTransportProvider fallback() {
        RdmaTransportProvider f = fallback;
        if (f == null) {
            synchronized (this) {
                f = fallback;
                if (f == null) {
                    f = ServiceLoader.load(RdmaTransportProvider.class, LoopbackRdmaProvider.class.getClassLoader())
                            .stream().map(ServiceLoader.Provider::get)
                            .filter(p -> !(p instanceof LoopbackRdmaProvider))
                            .min(Comparator.comparingInt(RdmaTransportProvider::priority).reversed()
                                    .thenComparing(p -> p.getClass().getName()))
                            .orElseThrow(() -> new RdmaException("no LoopbackRdma is started and no RDMA engine"
                                    + " is on the class path: start one (LoopbackRdma.create().start(), or"
                                    + " @RegisterExtension) or add io.reactiverdma:rdma-reactive-impl"));
                    fallback = f;
                }
            }
        }
        return f;
    }

    private <T> Mono<T> routed(Function<RdmaTransportProvider, Mono<T>> call) {
        return Mono.defer(() -> call.apply(target()));
    }

    @Override
    public Mono<RdmaConnection> connect(RdmaClientConfig config) {
        return routed(p -> p.connect(config));
    }

    @Override
    public Mono<DisposableRdmaServer> bind(RdmaServerConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return routed(p -> p.bind(config, handler));
    }

    @Override
    public Mono<RdmaMemory> memory(String addressOrDevice) {
        return routed(p -> p.memory(addressOrDevice));
    }

    @Override
    public Mono<RdmaDatagramEndpoint> bindDatagram(RdmaDatagramConfig config) {
        return routed(p -> p.bindDatagram(config));
    }

    @Override
    public Flux<DeviceEvent> deviceEvents() {
        return Flux.defer(() -> target().deviceEvents());
    }

    @Override
    public Mono<Void> shutdown() {
        return routed(RdmaTransportProvider::shutdown);
    }
}
