package io.reactiverdma.natives;

/**
 * RDMA cannot be used on this machine: a library is missing, no device is present, or no device has an
 * active port. The message says which; {@link RdmaNative#unavailabilityCause()} returns the same exception.
 */
public class RdmaUnavailableException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public RdmaUnavailableException(String message) {
        super(message);
    }

    public RdmaUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
