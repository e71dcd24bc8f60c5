package io.reactiverdma.natives;

/**
 * A native object was used after it was closed. Thrown before any native call is made, so a stale handle
 * never reaches rdma-core (which would crash the JVM).
 */
public class ClosedResourceException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public ClosedResourceException(String what) {
        super(what + " is closed");
    }
}
