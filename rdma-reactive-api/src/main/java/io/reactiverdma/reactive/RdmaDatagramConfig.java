package io.reactiverdma.reactive;

/**
 * The immutable configuration of an {@link RdmaDatagram}: the {@linkplain RdmaTransportConfig shared settings}
 * only (a datagram endpoint has no connect to observe and no admission; its own tuning is in the
 * {@code DATAGRAM_*} {@link RdmaOption options}). Every {@code with*} method returns a copy.
 */
public final class RdmaDatagramConfig extends RoleConfig<RdmaDatagramConfig> {
    private static final RdmaDatagramConfig DEFAULT = new RdmaDatagramConfig(TransportSettings.DEFAULT);

    private RdmaDatagramConfig(TransportSettings settings) {
        super(settings);
    }

    /** The shared defaults ({@link RdmaTransportConfig#defaults()}). */
    public static RdmaDatagramConfig defaults() {
        return DEFAULT;
    }

    /**
     * A datagram configuration with {@code shared}'s shared settings: {@code shared} itself when it is one
     * already, else {@link #defaults()}' role-specific settings with them (for code that validated the shared
     * settings without a role, as Spring's properties are).
     */
    public static RdmaDatagramConfig of(RdmaTransportConfig shared) {
        return DEFAULT.adopt(shared);
    }

    @Override
    RdmaDatagramConfig withSettings(TransportSettings settings) {
        return new RdmaDatagramConfig(settings);
    }

    @Override
    RdmaOption.Role role() {
        return RdmaOption.Role.DATAGRAM;
    }
}
