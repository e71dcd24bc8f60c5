package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

/**
 * The immutable configuration of an {@link RdmaServer}: the {@linkplain RdmaTransportConfig shared settings}
 * plus what only a server has, the connection observer and the admission step. Every {@code with*} method
 * returns a copy. (The handler is not configuration: {@link RdmaServer#handle} keeps it.)
 */
public final class RdmaServerConfig extends ConnectingConfig<RdmaServerConfig> {
    private static final RdmaServerConfig DEFAULT = new RdmaServerConfig(TransportSettings.DEFAULT, null, null);

    @Nullable
    private final ConnectionAcceptor acceptor;

    private RdmaServerConfig(TransportSettings settings, @Nullable RdmaConnectionObserver observer,
            @Nullable ConnectionAcceptor acceptor) {
        super(settings, observer);
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
        return DEFAULT.adopt(shared);
    }

    @Override
    RdmaServerConfig copy(TransportSettings settings, @Nullable RdmaConnectionObserver observer) {
        return new RdmaServerConfig(settings, observer, acceptor);
    }

    /** The admission step; null when every request is accepted (up to {@link RdmaOption#MAX_CONNECTIONS}). */
    @Nullable
    public ConnectionAcceptor acceptor() {
        return acceptor;
    }

    /** A copy whose {@code acceptor} decides each connection request; null: every request is accepted. */
    public RdmaServerConfig withAcceptor(@Nullable ConnectionAcceptor acceptor) {
        return new RdmaServerConfig(settings, observer(), acceptor);
    }

    @Override
    String roleSettings() {
        return super.roleSettings() + (acceptor != null ? ", acceptor " + acceptor : "");
    }

    @Override
    RdmaOption.Role role() {
        return RdmaOption.Role.SERVER;
    }
}
