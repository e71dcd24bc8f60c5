package io.reactiverdma.reactive;

import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

/**
 * The engine's process-wide resources: per RDMA device a protection domain, registered buffer pools, flow
 * control words, completion pollers and an asynchronous-event reader, and one rdma_cm event thread. They are
 * created on first use and kept until {@link #disposeLater()} (as Reactor Netty's loop resources): call it
 * when an application, a test or a Spring context that used RDMA stops, so that nothing outlives it.
 *
 * <p>Each method has a form that takes the engine: for roles that {@code runOn(engine)}, whose connections,
 * servers and endpoints live in that engine, not in the class path's (null: the class path's engine, as
 * {@code runOn(null)}).
 */
public final class RdmaResources {
    private RdmaResources() {
    }

    /**
     * The events the devices in use report (port up/down, GID changes, device failure or removal), from now
     * on: a hot {@code Flux} that never completes by itself; each subscriber sees the events published after
     * it subscribed, buffered up to 256 per subscriber (past that the oldest are dropped). Cancelling stops
     * the subscription only.
     */
    public static Flux<DeviceEvent> deviceEvents() {
        return deviceEvents(null);
    }

    /** {@link #deviceEvents()} of {@code engine}'s devices (null: the class path's engine). */
    public static Flux<DeviceEvent> deviceEvents(@Nullable RdmaTransportProvider engine) {
        return Flux.defer(() -> orClassPath(engine).deviceEvents());
    }

    /**
     * The registered memory of the RDMA device named by {@code addressOrDevice}, before any connection exists:
     * either an address of the device's netdev (as a server's host) or the device's name ("rxe0", "mlx5_0").
     * It is the same memory (one protection domain) that every connection on that device uses
     * ({@link RdmaConnection#memory()}), so what a server registers at start is valid on each connection it
     * accepts later. Emits it once the device is open; fails with {@link RdmaException} when no RDMA device
     * has that address or name. It lives until {@link #disposeLater()} (or the device fails or is removed);
     * release what you registered before that.
     */
    public static Mono<RdmaMemory> memory(String addressOrDevice) {
        return memory(null, addressOrDevice);
    }

    /**
     * {@link #memory(String)} in {@code engine} (null: the class path's engine): the memory that the
     * connections of roles that {@code runOn(engine)} use on that device.
     */
    public static Mono<RdmaMemory> memory(@Nullable RdmaTransportProvider engine, String addressOrDevice) {
        java.util.Objects.requireNonNull(addressOrDevice, "addressOrDevice");
        return Mono.defer(() -> orClassPath(engine).memory(addressOrDevice));
    }

    /**
     * Closes every connection and server of the engine and fails connect attempts under way, waits for the
     * close sequences (at most about 10 s; a close that cannot finish is logged), then releases every device
     * resource and stops the engine's threads (its one daemon timer thread excepted). Completes when that is
     * done; never errors. Idempotent: a call made while a shutdown is under way completes with it. Lazy: nothing happens until subscribed. The engine can be used again afterwards: the
     * next connect or bind creates fresh resources.
     */
    public static Mono<Void> disposeLater() {
        return disposeLater(null);
    }

    /**
     * {@link #disposeLater()} of {@code engine} (null: the class path's engine): closes and releases what that
     * engine opened, and nothing of another engine.
     */
    public static Mono<Void> disposeLater(@Nullable RdmaTransportProvider engine) {
        return Mono.defer(() -> orClassPath(engine).shutdown());
    }

    private static RdmaTransportProvider orClassPath(@Nullable RdmaTransportProvider engine) {
        return engine != null ? engine : Providers.provider();
    }
}
