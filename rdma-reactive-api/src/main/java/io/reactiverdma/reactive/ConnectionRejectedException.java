package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

/**
 * The server rejected the connection request. {@link #rejection()} says why as a value a program can test,
 * {@link #serverReason()} the server's words; {@link #privateData()} holds the reject's raw private data.
 */
public class ConnectionRejectedException extends RdmaConnectException {
    private static final long serialVersionUID = 1L;

    /** Why the server rejected. */
    public enum Rejection {
        /** The server has {@link RdmaOption#MAX_CONNECTIONS} connections already. */
        CONNECTION_LIMIT,
        /** The server's acceptor rejected the request ({@link Admission#reject(String)}). */
        REFUSED,
        /** The server's acceptor did not answer within its {@link RdmaOption#ACCEPT_TIMEOUT}. */
        ACCEPT_TIMEOUT,
        /** The request's private data was malformed. */
        INVALID_REQUEST,
        /** The server is shutting down. */
        SHUTTING_DOWN,
        /** The server failed to set the connection up (its acceptor or handler failed, resources ran out). */
        SERVER_ERROR,
        /**
         * A reject without this framework's reason: a plain rdma_cm peer's, or the CM's own (status 8: nothing
         * listens on that port).
         */
        UNSPECIFIED
    }

    private final Rejection rejection;
    private final String serverReason;

    public ConnectionRejectedException(String message, int status, byte[] privateData, Rejection rejection,
            @Nullable String serverReason) {
        super(message, ConnectionEvent.Type.REJECTED, status, privateData);
        this.rejection = java.util.Objects.requireNonNull(rejection, "rejection");
        this.serverReason = serverReason;
    }

    /** Why the server rejected. */
    public Rejection rejection() {
        return rejection;
    }

    /** The server's reason in its words; null for {@link Rejection#UNSPECIFIED}. */
    @Nullable
    public String serverReason() {
        return serverReason;
    }
}
