package io.reactiverdma.natives;

/**
 * Root of every exception the RDMA bindings throw. Unchecked, like the rest of the JDK's I/O-adjacent
 * runtime failures: a failed verb is not something a caller can usually recover from locally.
 */
public class RdmaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RdmaException(String message) {
        super(message);
    }

    public RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
