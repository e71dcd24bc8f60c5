package io.reactiverdma.reactive;

/** {@link RdmaTransportConfig#defaults()}: the shared settings without a role. */
final class SharedConfig extends RoleConfig<SharedConfig> {
    static final SharedConfig DEFAULT = new SharedConfig(TransportSettings.DEFAULT);

    private SharedConfig(TransportSettings settings) {
        super(settings);
    }

    @Override
    SharedConfig withSettings(TransportSettings settings) {
        return new SharedConfig(settings);
    }

    @Override
    String typeName() {
        return "RdmaTransportConfig";
    }

    @Override
    @reactor.util.annotation.Nullable
    RdmaOption.Role role() {
        return null;
    }
}
