package io.reactiverdma.reactive;

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

    /** {@code shared} when it is this role's already, else this configuration with {@code shared}'s settings. */
    @SuppressWarnings("unchecked")
    final C adopt(RdmaTransportConfig shared) {
        java.util.Objects.requireNonNull(shared, "shared");
        return getClass().isInstance(shared) ? (C) shared : withSettings(shared.settings);
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
        return withSettings(settings.withOption(option, value));
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
}
