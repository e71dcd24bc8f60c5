package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

/**
 * What the two connection roles' configurations share beyond the transport's: the observer told about each
 * connect (client) or connection request (server). Datagram endpoints have no connections to observe.
 *
 * @param <C> the role's configuration type
 */
abstract class ConnectingConfig<C extends ConnectingConfig<C>> extends RoleConfig<C> {
    @Nullable
    private final RdmaConnectionObserver observer;

    ConnectingConfig(TransportSettings settings, @Nullable RdmaConnectionObserver observer) {
        super(settings);
        this.observer = observer;
    }

    /** This role's configuration with {@code settings} and {@code observer}, and this one's other settings. */
    abstract C copy(TransportSettings settings, @Nullable RdmaConnectionObserver observer);

    @Override
    final C withSettings(TransportSettings settings) {
        return copy(settings, observer);
    }

    /**
     * Told about every connect (a client's) or connection request (a server's): when it starts, and whether it
     * is established, fails or is cancelled; null: none.
     */
    @Nullable
    public final RdmaConnectionObserver observer() {
        return observer;
    }

    /** A copy with {@code observer}; null: no observer. */
    public final C withObserver(@Nullable RdmaConnectionObserver observer) {
        return copy(settings, observer);
    }

    @Override
    String roleSettings() {
        return observer != null ? ", observer " + observer : "";
    }
}
