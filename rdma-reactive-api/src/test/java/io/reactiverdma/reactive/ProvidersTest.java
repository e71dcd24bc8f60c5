package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which provider the API uses when several are on the class path: never the class path's order. */
class ProvidersTest {
    /** A provider that does nothing, of a given priority. */
    private static class Ranked implements RdmaTransportProvider {
        private final int priority;

        Ranked(int priority) {
            this.priority = priority;
        }

        @Override
        public int priority() {
            return priority;
        }

        @Override
        public Mono<RdmaConnection> connect(RdmaClientConfig config) {
            return Mono.empty();
        }

        @Override
        public Mono<DisposableRdmaServer> bind(RdmaServerConfig config,
                Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
            return Mono.empty();
        }

        @Override
        public Mono<RdmaMemory> memory(String addressOrDevice) {
            return Mono.empty();
        }

        @Override
        public Flux<DeviceEvent> deviceEvents() {
            return Flux.empty();
        }

        @Override
        public Mono<Void> shutdown() {
            return Mono.empty();
        }
    }

    private static final class A extends Ranked {
        A(int priority) {
            super(priority);
        }
    }

    private static final class B extends Ranked {
        B(int priority) {
            super(priority);
        }
    }

    @Test
    void theHighestPriorityWinsInEitherOrder() {
        RdmaTransportProvider engine = new A(0);
        RdmaTransportProvider testSupport = new B(100);
        assertSame(testSupport, Providers.choose(List.of(engine, testSupport)));
        assertSame(testSupport, Providers.choose(List.of(testSupport, engine)));
    }

    @Test
    void ofEqualPrioritiesTheFirstClassNameWinsInEitherOrder() {
        RdmaTransportProvider a = new A(0);
        RdmaTransportProvider b = new B(0);
        assertSame(a, Providers.choose(List.of(a, b)));
        assertSame(a, Providers.choose(List.of(b, a)));
    }

    @Test
    void noProviderIsATypedErrorThatNamesTheMissingModule() {
        RdmaException e = assertThrows(RdmaException.class, () -> Providers.choose(List.of()));
        assertTrue(e.getMessage().contains("rdma-reactive-impl"), e.getMessage());
    }
}
