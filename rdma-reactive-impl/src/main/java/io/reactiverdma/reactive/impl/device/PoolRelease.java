package io.reactiverdma.reactive.impl.device;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Objects;

/**
 * When the buffer pool gives idle slabs back: a slab none of whose chunks is held, idle for at least
 * {@code idleTime}, is deregistered and freed, except the {@code keepIdleBytes} of idle slabs that went idle
 * last (kept registered so that a server going from no connection to a few does not register a slab each
 * time). One setting per engine, read from system properties when the engine is made (the pool is shared by
 * every client and server on a device, so it is not a per-connection option). See docs/memory-and-buffers.md.
 */
public record PoolRelease(Duration idleTime, long keepIdleBytes) {
    /** The system property of {@link #idleTime}, an ISO-8601 duration ({@code PT30S}) or milliseconds. */
    public static final String IDLE_TIME_PROPERTY = "io.reactiverdma.memory.releaseIdleAfter";
    /** The system property of {@link #keepIdleBytes}, in bytes. */
    public static final String KEEP_IDLE_PROPERTY = "io.reactiverdma.memory.keepIdleBytes";
    /** 30 s idle, one 4 MiB slab kept: the defaults argued in docs/memory-and-buffers.md. */
    public static final PoolRelease DEFAULT = new PoolRelease(Duration.ofSeconds(30), DeviceResources.SLAB_SIZE);

    public PoolRelease {
        Objects.requireNonNull(idleTime, "idleTime");
        if (idleTime.isNegative()) {
            throw new IllegalArgumentException("idleTime must be >= 0, got " + idleTime);
        }
        if (keepIdleBytes < 0) {
            throw new IllegalArgumentException("keepIdleBytes must be >= 0, got " + keepIdleBytes);
        }
    }

    /** The defaults, overridden by the system properties that are set; a malformed value is refused. */
    public static PoolRelease fromSystemProperties() {
        String idle = System.getProperty(IDLE_TIME_PROPERTY);
        String keep = System.getProperty(KEEP_IDLE_PROPERTY);
        Duration idleTime = DEFAULT.idleTime;
        long keepIdle = DEFAULT.keepIdleBytes;
        try {
            if (idle != null && !idle.isBlank()) {
                String v = idle.trim();
                idleTime = v.chars().allMatch(Character::isDigit) ? Duration.ofMillis(Long.parseLong(v)) : Duration.parse(v);
            }
            if (keep != null && !keep.isBlank()) {
                keepIdle = Long.parseLong(keep.trim());
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException("malformed " + IDLE_TIME_PROPERTY + "=" + idle + " or "
                    + KEEP_IDLE_PROPERTY + "=" + keep + ": " + e.getMessage(), e);
        }
        return new PoolRelease(idleTime, keepIdle);
    }
}
