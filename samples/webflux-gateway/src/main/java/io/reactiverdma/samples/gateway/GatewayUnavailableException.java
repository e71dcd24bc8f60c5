package io.reactiverdma.samples.gateway;

/** The gateway has no connection to the key-value service and cannot get one now (stopped, or not started). */
public class GatewayUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GatewayUnavailableException(String message) {
        super(message);
    }
}
