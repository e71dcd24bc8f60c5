package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

import java.util.Objects;

/**
 * The immutable configuration of an {@link RdmaClient}: the {@linkplain RdmaTransportConfig shared settings}
 * plus what only a client has, the connection observer and the private data sent with the connect request.
 * Every {@code with*} method returns a copy.
 */
public final class RdmaClientConfig extends ConnectingConfig<RdmaClientConfig> {
    /**
     * The most private data a client's application sends with its connect (see
     * {@link #withPrivateData(byte[])}; the docs' server guide says where the limit comes from).
     */
    public static final int MAX_CONNECT_PRIVATE_DATA = 32;
    private static final byte[] NO_DATA = new byte[0];
    private static final RdmaClientConfig DEFAULT = new RdmaClientConfig(TransportSettings.DEFAULT, null, NO_DATA);

    private final byte[] privateData;

    private RdmaClientConfig(TransportSettings settings, @Nullable RdmaConnectionObserver observer, byte[] privateData) {
        super(settings, observer);
        this.privateData = privateData;
    }

    /** The shared defaults ({@link RdmaTransportConfig#defaults()}), no observer, no private data. */
    public static RdmaClientConfig defaults() {
        return DEFAULT;
    }

    /**
     * A client configuration with {@code shared}'s shared settings: {@code shared} itself when it is one
     * already, else {@link #defaults()}' role-specific settings with them (for code that validated the shared
     * settings without a role, as Spring's properties are).
     */
    public static RdmaClientConfig of(RdmaTransportConfig shared) {
        return DEFAULT.adopt(shared);
    }

    @Override
    RdmaClientConfig copy(TransportSettings settings, @Nullable RdmaConnectionObserver observer) {
        return new RdmaClientConfig(settings, observer, privateData);
    }

    /** The private data sent with the connect request (a copy; empty when none). */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * A copy that sends {@code privateData} (copied) to the server's application with the connect request (its
     * acceptor reads it in {@link ConnectRequest#privateData()}, its handler in
     * {@link RdmaConnection#peerPrivateData()}); empty: none.
     *
     * @throws NullPointerException    when {@code privateData} is null
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#PRIVATE_DATA_TOO_LARGE}) when it
     *                                 is longer than {@link #MAX_CONNECT_PRIVATE_DATA}
     */
    public RdmaClientConfig withPrivateData(byte[] privateData) {
        Objects.requireNonNull(privateData, "privateData");
        if (privateData.length > MAX_CONNECT_PRIVATE_DATA) {
            throw new InvalidRequestException(InvalidRequestException.Reason.PRIVATE_DATA_TOO_LARGE,
                    "connect private data is " + privateData.length + " bytes; at most " + MAX_CONNECT_PRIVATE_DATA
                            + " fit (56 of the CM request less 24 of the engine's negotiation)");
        }
        return new RdmaClientConfig(settings, observer(), privateData.length == 0 ? NO_DATA : privateData.clone());
    }

    @Override
    String roleSettings() {
        return super.roleSettings() + (privateData.length > 0 ? ", " + privateData.length + " bytes of private data" : "");
    }

    @Override
    RdmaOption.Role role() {
        return RdmaOption.Role.CLIENT;
    }
}
