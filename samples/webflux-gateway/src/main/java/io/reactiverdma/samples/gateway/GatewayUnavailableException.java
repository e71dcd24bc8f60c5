package io.reactiverdma.samples.gateway;

import reactor.util.annotation.Nullable;

import java.time.Duration;

/**
 * The gateway has no connection to the key-value service and cannot get one now (stopped, not started,
 * connecting failed, or the next attempt is not due yet: {@link #retryAfter()}).
 */
public class GatewayUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    @Nullable
    private final transient Duration retryAfter;

    public GatewayUnavailableException(String message) {
        this(message, null, null);
    }

    public GatewayUnavailableException(String message, Throwable cause) {
        this(message, cause, null);
    }

    public GatewayUnavailableException(String message, @Nullable Throwable cause, @Nullable Duration retryAfter) {
        super(message, cause);
        this.retryAfter = retryAfter;
    }

    /** When a retry may succeed, or null when unknown. */
    @Nullable
    public Duration retryAfter() {
        return retryAfter;
    }
}
