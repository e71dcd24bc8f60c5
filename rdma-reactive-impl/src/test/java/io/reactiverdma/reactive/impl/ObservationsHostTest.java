package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.cm.EngineObservations;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaConnectionObserver;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaObserver;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.util.context.Context;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Observations around connect on the host, where no connect can succeed (no RDMA device): the attempt is
 * observed with its parent from the subscriber's context and ends exactly once, as failed with the connect's
 * error or as cancelled. The established case is {@link ObservationsRxeTest}'s.
 */
class ObservationsHostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aFailedConnectIsAnObservationWithItsErrorUnderTheSubscribersParent() {
        RecordingObservationHandler handler = new RecordingObservationHandler();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(handler);
        Observation parent = Observation.start("http.server.requests", registry);
        RdmaClient client = RdmaClient.create().host("10.77.0.1").port(7471)
                .option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(2))
                .observer(MicrometerRdmaObserver.of(registry));

        StepVerifier.create(client.connect().contextWrite(Context.of(MicrometerRdmaObserver.CONTEXT_KEY, parent)))
                .expectError(RdmaException.class)
                .verify(WAIT);
        parent.stop();

        Observation.Context connect = handler.stoppedNamed(MicrometerRdmaObserver.CONNECT);
        assertSame(parent, connect.getParentObservation(), "the subscriber's observation is the parent");
        assertEquals("client", connect.getLowCardinalityKeyValue("rdma.side").getValue());
        assertEquals("failed", connect.getLowCardinalityKeyValue("rdma.outcome").getValue());
        assertEquals("10.77.0.1", connect.getHighCardinalityKeyValue("network.peer.address").getValue());
        assertEquals("7471", connect.getHighCardinalityKeyValue("network.peer.port").getValue());
        assertInstanceOf(RdmaException.class, connect.getError());
    }

    @Test
    void eachSubscriptionIsOneAttemptEndedOnceAndACancelIsCancelled() {
        List<String> ends = new CopyOnWriteArrayList<>();
        RdmaConnectionObserver observer = (side, remote, context) -> new RdmaConnectionObserver.Attempt() {
            @Override
            public void established() {
                ends.add("established");
            }

            @Override
            public void failed(Throwable error) {
                ends.add("failed");
            }

            @Override
            public void cancelled() {
                ends.add("cancelled " + side + " " + remote.getHostString() + " " + context.getOrDefault("k", "-"));
            }
        };
        Sinks.Empty<RdmaConnection> never = Sinks.empty();
        Mono<RdmaConnection> observed = EngineObservations.connect(
                RdmaClientConfig.defaults().withHost("10.77.0.9").withObserver(observer), never.asMono());

        StepVerifier.create(observed.contextWrite(Context.of("k", "v")))
                .expectSubscription()
                .thenCancel()
                .verify(WAIT);
        assertEquals(List.of("cancelled CLIENT 10.77.0.9 v"), ends);

        StepVerifier.create(EngineObservations.connect(RdmaClientConfig.defaults().withHost("h")
                        .withObserver(observer), Mono.<RdmaConnection>error(new RdmaException("boom"))))
                .expectErrorMessage("boom")
                .verify(WAIT);
        assertEquals(List.of("cancelled CLIENT 10.77.0.9 v", "failed"), ends);
    }

    @Test
    void withoutAnObserverTheConnectIsNotWrapped() {
        Mono<RdmaConnection> connect = Mono.never();
        assertSame(connect, EngineObservations.connect(RdmaClientConfig.defaults(), connect));
    }
}
