package io.reactiverdma.reactive;

import java.util.Objects;

/**
 * Something an RDMA device reported on its own, outside any one operation (an asynchronous event of
 * {@code ibv_get_async_event}, or rdma_cm's device removal), as published on
 * {@link RdmaResources#deviceEvents()}. Errors of one connection's queue pair close that connection instead
 * (with a {@link ConnectionClosedException} naming the event).
 *
 * @param device the device's name ({@code rxe0}, {@code mlx5_0})
 * @param type   what happened
 * @param port   the port of a port event, else -1
 */
public record DeviceEvent(String device, Type type, int port) {
    /** What a device reported. */
    public enum Type {
        /** A port became active (link up). */
        PORT_ACTIVE,
        /** A port went down: connections through it fail when their retries run out. */
        PORT_ERROR,
        /** A port's GID table changed (an address was added to or removed from its netdev). */
        GID_CHANGE,
        /** A port's LID, P_Key table or subnet manager changed, or it must re-register (InfiniBand). */
        PORT_CHANGE,
        /** The device failed: every connection on it was failed and its resources released. */
        DEVICE_FATAL,
        /** The device was removed (rdma_cm DEVICE_REMOVAL): every connection on it was closed and its resources released. */
        DEVICE_REMOVED
    }

    public DeviceEvent {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(type, "type");
    }
}
