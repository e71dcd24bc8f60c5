package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

/**
 * The immutable configuration of an {@link RdmaServer}: the {@linkplain RdmaTransportConfig shared settings}
 * plus what only a server has, the connection observer and the admission step. Every {@code with*} method
 * returns a copy. (The handler is not configuration: {@link RdmaServer#handle} keeps it.)
 */
public final class RdmaServerConfig extends RoleConfig<RdmaServerConfig> {
    private static final RdmaServerConfig DEFAULT = new RdmaServerConfig(TransportSettings.DEFAULT, null, null);

    @Nullable
    private final RdmaConnectionObserver observer;
    @Nullable
    private final ConnectionAcceptor acceptor;

    private RdmaServerConfig(TransportSettings settings, @Nullable RdmaConnectionObserver observer,
            @Nullable ConnectionAcceptor acceptor) {
        super(settings);
        this.observer = observer;
        this.acceptor = acceptor;
    }

    /** The shared defaults ({@link RdmaTransportConfig#defaults()}), no observer, every request accepted. */
    public static RdmaServerConfig defaults() {
        return DEFAULT;
    }

    /**
     * A server configuration with {@code shared}'s shared settings: {@code shared} itself when it is one
     * already, else {@link #defaults()}' role-specific settings with them (for code that validated the shared
     * settings without a role, as Spring's properties are).
     */
    public static RdmaServerConfig of(RdmaTransportConfig shared) {
        java.util.Objects.requireNonNull(shared, "shared");
        return shared instanceof RdmaServerConfig ? (RdmaServerConfig) shared : DEFAULT.withSettings(shared.settings);
    }

    @Override
    RdmaServerConfig withSettings(TransportSettings settings) {
        return new RdmaServerConfig(settings, observer, acceptor);
    }

    /** Told about every connection request: when it arrives and whether it is established or fails; null: none. */
    @Nullable
    public RdmaConnectionObserver observer() {
        return observer;
    }

    /** A copy with {@code observer}; null: no observer. */
    public RdmaServerConfig withObserver(@Nullable RdmaConnectionObserver observer) {
        return new RdmaServerConfig(settings, observer, acceptor);
    }

    /** The admission step; null when every request is accepted (up to {@link RdmaOption#MAX_CONNECTIONS}). */
    @Nullable
    public ConnectionAcceptor acceptor() {
        return acceptor;
    }

    /** A copy whose {@code acceptor} decides each connection request; null: every request is accepted. */
    public RdmaServerConfig withAcceptor(@Nullable ConnectionAcceptor acceptor) {
        return new RdmaServerConfig(settings, observer, acceptor);
    }

    @Override
    String roleSettings() {
        return (observer != null ? ", observer " + observer : "") + (acceptor != null ? ", acceptor " + acceptor : "");
    }
}
