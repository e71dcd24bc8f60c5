package io.reactiverdma.samples.gateway;

/** The gateway has no connection to the key-value service and cannot get one now (stopped, not started, or connecting failed). */
public class GatewayUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GatewayUnavailableException(String message) {
        super(message);
    }

    public GatewayUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
