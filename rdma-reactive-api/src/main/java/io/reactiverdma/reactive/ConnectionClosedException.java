package io.reactiverdma.reactive;

/**
 * The connection was closed (by either side, or by a fatal queue pair error) before the operation could
 * complete: it was refused, or it was posted and then flushed ({@code IBV_WC_WR_FLUSH_ERR}). The cause, when
 * there is one, is what closed the connection (for example the {@link RdmaCompletionException} of the work
 * request that failed first).
 */
public class ConnectionClosedException extends RdmaException {
    private static final long serialVersionUID = 1L;

    public ConnectionClosedException(String message) {
        super(message);
    }

    public ConnectionClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
