package io.reactiverdma.spring.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaDatagram;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

import java.util.Objects;

/**
 * Puts the engine's meters into the application's registry, and only there: a customizer of the
 * auto-configured client and server that sets {@code metrics(true, () -> MicrometerRdmaRecorder.of(registry,
 * remoteAddressTags))}. Micrometer's global registry is neither used nor changed.
 */
public class RdmaMetricsBinding implements RdmaClientCustomizer, RdmaServerCustomizer {
    private final MeterRegistry registry;
    private final MicrometerRdmaRecorder recorder;

    /**
     * @param remoteAddressTags {@code reactive-rdma.metrics-remote-address-tags}: tag with the peer's address,
     *        for at most this many peers per device (0: no remote tag)
     * @throws InvalidConfigurationPropertyValueException naming the property when the cap is refused
     */
    public RdmaMetricsBinding(MeterRegistry registry, int remoteAddressTags) {
        this.registry = Objects.requireNonNull(registry, "registry");
        try {
            this.recorder = MicrometerRdmaRecorder.of(registry, remoteAddressTags);
        } catch (InvalidRequestException e) {
            throw new InvalidConfigurationPropertyValueException(RdmaProperties.PREFIX + ".metrics-remote-address-tags",
                    remoteAddressTags, e.getMessage());
        }
    }

    /** The registry the engine's meters show in. */
    public MeterRegistry registry() {
        return registry;
    }

    @Override
    public RdmaClient customize(RdmaClient client) {
        return client.metrics(true, () -> recorder);
    }

    @Override
    public RdmaServer customize(RdmaServer server) {
        return server.metrics(true, () -> recorder);
    }

    /** The auto-configured datagram bean's meters (there is no datagram customizer type). */
    public RdmaDatagram customize(RdmaDatagram datagram) {
        return datagram.metrics(true, () -> recorder);
    }
}
