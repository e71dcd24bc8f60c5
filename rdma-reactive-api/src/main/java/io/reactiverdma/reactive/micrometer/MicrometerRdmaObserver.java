package io.reactiverdma.reactive.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.reactiverdma.reactive.RdmaConnectionObserver;
import reactor.util.context.ContextView;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * Micrometer Observation around every connect ({@value #CONNECT}) and accept ({@value #ACCEPT}), so Micrometer
 * Tracing shows RDMA connects in a trace, and Micrometer's observation handlers (timers, logs) see them. Use it
 * as {@code client.observer(MicrometerRdmaObserver.of(observationRegistry))}.
 * <p>
 * A connect's parent is the observation in the subscriber's Reactor context (key {@value #CONTEXT_KEY}, where
 * Reactor's {@code tap} and Spring put it), else the registry's current one. Key values: low cardinality
 * {@code rdma.side} ({@code client}, {@code server}) and {@code rdma.outcome} ({@code established},
 * {@code failed}, {@code cancelled}); high cardinality {@code network.peer.address} and
 * {@code network.peer.port}. A failure is the observation's error.
 */
public final class MicrometerRdmaObserver implements RdmaConnectionObserver {
    /** The observation name of a client's connect. */
    public static final String CONNECT = "rdma.client.connect";
    /** The observation name of a server's accept. */
    public static final String ACCEPT = "rdma.server.accept";
    /**
     * Where the parent observation is in a Reactor context: Micrometer's
     * {@code ObservationThreadLocalAccessor.KEY}, spelled out so this class needs no context-propagation jar.
     */
    public static final String CONTEXT_KEY = "micrometer.observation";

    private final ObservationRegistry registry;

    private MicrometerRdmaObserver(ObservationRegistry registry) {
        this.registry = registry;
    }

    /** Observations in {@code registry} (a no-op registry makes them no-ops). */
    public static MicrometerRdmaObserver of(ObservationRegistry registry) {
        return new MicrometerRdmaObserver(Objects.requireNonNull(registry, "registry"));
    }

    @Override
    public Attempt start(Side side, InetSocketAddress remote, ContextView context) {
        Objects.requireNonNull(side, "side");
        Objects.requireNonNull(context, "context");
        Observation parent = context.getOrDefault(CONTEXT_KEY, null);
        if (parent == null) {
            parent = registry.getCurrentObservation();
        }
        Observation o = Observation.createNotStarted(side == Side.CLIENT ? CONNECT : ACCEPT, registry)
                .contextualName(side == Side.CLIENT ? "rdma connect" : "rdma accept")
                .parentObservation(parent)
                .lowCardinalityKeyValue("rdma.side", side.tag());
        if (remote != null) {
            o.highCardinalityKeyValue("network.peer.address", remote.getHostString())
                    .highCardinalityKeyValue("network.peer.port", Integer.toString(remote.getPort()));
        }
        o.start();
        return new ObservedAttempt(o);
    }

    @Override
    public String toString() {
        return "MicrometerRdmaObserver{" + registry + "}";
    }

    private static final class ObservedAttempt implements Attempt {
        private final Observation observation;

        ObservedAttempt(Observation observation) {
            this.observation = observation;
        }

        @Override
        public void established() {
            observation.lowCardinalityKeyValue("rdma.outcome", "established").stop();
        }

        @Override
        public void failed(Throwable error) {
            observation.lowCardinalityKeyValue("rdma.outcome", "failed").error(error).stop();
        }

        @Override
        public void cancelled() {
            observation.lowCardinalityKeyValue("rdma.outcome", "cancelled").stop();
        }
    }
}
