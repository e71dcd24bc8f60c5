package io.reactiverdma.reactive;

import java.util.Objects;

/**
 * A connection attempt ended without a connection: the address or route could not be resolved, the peer
 * rejected it (with its private data, if it sent any), it was unreachable, or it timed out.
 */
public class RdmaConnectException extends RdmaException {
    private static final long serialVersionUID = 1L;

    private final ConnectionEvent.Type reason;
    private final int status;
    private final byte[] privateData;

    public RdmaConnectException(String message, ConnectionEvent.Type reason, int status, byte[] privateData) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.status = status;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** What ended the attempt (for example {@link ConnectionEvent.Type#REJECTED}). */
    public ConnectionEvent.Type reason() {
        return reason;
    }

    /** The rdma_cm event status: a negative errno, or for REJECTED the CM reject reason. */
    public int status() {
        return status;
    }

    /** The private data the peer sent with its reject (a copy; empty when none). */
    public byte[] privateData() {
        return privateData.clone();
    }
}
