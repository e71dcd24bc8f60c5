package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.util.function.Supplier;

/**
 * The shared {@code with*} methods of {@link RdmaTransportConfig}, written once for every role: each returns
 * the role's own type ({@code C}), a copy that keeps the role's settings.
 *
 * @param <C> the role's configuration type
 */
abstract class RoleConfig<C extends RoleConfig<C>> extends RdmaTransportConfig {
    RoleConfig(TransportSettings settings) {
        super(settings);
    }

    /** This role's configuration with {@code settings} and this one's role-specific settings. */
    abstract C withSettings(TransportSettings settings);

    /** The role whose options this configuration takes; null for the role-less one, which takes every option. */
    @Nullable
    abstract RdmaOption.Role role();

    /**
     * {@code shared} when it is this role's already, else this configuration with {@code shared}'s settings less
     * the options this role does not use.
     */
    @SuppressWarnings("unchecked")
    final C adopt(RdmaTransportConfig shared) {
        java.util.Objects.requireNonNull(shared, "shared");
        if (getClass().isInstance(shared)) {
            return (C) shared;
        }
        RdmaOption.Role role = role();
        return withSettings(role == null ? shared.settings : shared.settings.withOptionsOf(role));
    }

    @Override
    public final C withHost(String host) {
        return withSettings(settings.withHost(host));
    }

    @Override
    public final C withPort(int port) {
        return withSettings(settings.withPort(port));
    }

    @Override
    public final <T> C withOption(RdmaOption<T> option, T value) {
        TransportSettings validated = settings.withOption(option, value);
        RdmaOption.Role role = role();
        if (role != null && !option.appliesTo(role)) {
            throw new InvalidRequestException(InvalidRequestException.Reason.OPTION_NOT_FOR_ROLE, "option " + option
                    + " is not for a " + role.description() + ": it applies to " + roles(option));
        }
        return withSettings(validated);
    }

    private static String roles(RdmaOption<?> option) {
        StringBuilder b = new StringBuilder();
        for (RdmaOption.Role r : option.roles()) {
            b.append(b.length() == 0 ? "" : ", ").append(r.description()).append('s');
        }
        return b.toString();
    }

    @Override
    public final C withMetrics(boolean metrics) {
        return withSettings(settings.withGlobalMetrics(metrics));
    }

    @Override
    public final C withMetrics(boolean enable, @Nullable Supplier<? extends RdmaMetricsRecorder> recorder) {
        return withSettings(settings.withMetrics(enable, recorder));
    }

    @Override
    public final C withCallbackScheduler(@Nullable Scheduler scheduler) {
        return withSettings(settings.withCallbackScheduler(scheduler));
    }

    @Override
    public final C withEngine(@Nullable RdmaTransportProvider engine) {
        return withSettings(settings.withEngine(engine));
    }
}
