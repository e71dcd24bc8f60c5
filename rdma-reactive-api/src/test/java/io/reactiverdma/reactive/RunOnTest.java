package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * {@code runOn(engine)}: a client, server or datagram endpoint connects or binds through the engine it is given,
 * not the one the class path provides (this module's test class path has none, so the global one would fail).
 */
class RunOnTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    /** An engine that records what it was asked and answers with an error naming itself. */
    private static final class Recording implements RdmaTransportProvider {
        final List<Object> asked = new ArrayList<>();

        @Override
        public Mono<RdmaConnection> connect(RdmaClientConfig config) {
            asked.add(config);
            return Mono.error(new RdmaException("recording engine"));
        }

        @Override
        public Mono<DisposableRdmaServer> bind(RdmaServerConfig config,
                Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
            asked.add(config);
            return Mono.error(new RdmaException("recording engine"));
        }

        @Override
        public Mono<RdmaDatagramEndpoint> bindDatagram(RdmaDatagramConfig config) {
            asked.add(config);
            return Mono.error(new RdmaException("recording engine"));
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

    @Test
    void eachRoleConnectsOrBindsThroughTheEngineItRunsOn() {
        Recording engine = new Recording();
        RdmaClient client = RdmaClient.create().runOn(engine).host("10.0.0.1");
        RdmaServer server = RdmaServer.create().host("10.0.0.1").runOn(engine).handle(c -> Mono.never());
        RdmaDatagram datagram = RdmaDatagram.create().host("10.0.0.1").runOn(engine);

        StepVerifier.create(client.connect()).expectErrorMessage("recording engine").verify(WAIT);
        StepVerifier.create(server.bind()).expectErrorMessage("recording engine").verify(WAIT);
        StepVerifier.create(datagram.bind()).expectErrorMessage("recording engine").verify(WAIT);
        assertEquals(List.of(client.configuration(), server.configuration(), datagram.configuration()), engine.asked);
    }

    @Test
    void theEngineIsPartOfTheConfigurationAndKeptBySettersAfterIt() {
        Recording engine = new Recording();
        RdmaClient client = RdmaClient.create().runOn(engine).port(9).option(RdmaOption.SEND_QUEUE_DEPTH, 4);
        assertSame(engine, client.configuration().engine());
        assertNull(RdmaClient.create().configuration().engine());
        assertNull(client.runOn(null).configuration().engine(), "null: back to the class path's engine");
        assertSame(engine, RdmaServerConfig.of(client.configuration()).engine());
    }

    @Test
    void withoutRunOnTheClassPathsEngineIsUsedAndItsAbsenceIsTyped() {
        StepVerifier.create(RdmaClient.create().host("10.0.0.1").connect())
                .expectErrorSatisfies(e -> {
                    assertEquals(RdmaException.class, e.getClass());
                    assertEquals(true, e.getMessage().contains("no RDMA engine on the class path"), e.getMessage());
                })
                .verify(WAIT);
    }
}
