package io.reactiverdma.reactive;

/**
 * The peer broke the framework's protocol on a connection with credit flow control, and the connection was
 * closed for it: {@link #violation()} says what it did. A server's handler sees it as the error of its
 * connection's {@code receive()}; the peer sees its connection end (a reject or a disconnect).
 */
public class PeerProtocolException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /** What the peer did. */
    public enum Violation {
        /**
         * It never sent its hello (the 0-byte message that opens the credit words) within the server's
         * {@link RdmaOption#ACCEPT_TIMEOUT} of its connection being ESTABLISHED. On a shared receive queue a receive is kept for
         * each hello: the deadline keeps silent peers from holding those receives.
         */
        HELLO_TIMEOUT,
        /**
         * It sent a message without a credit. On a shared receive queue the message took a receive promised to
         * another connection; it is not delivered, and the connection is closed at once.
         */
        SENT_WITHOUT_CREDIT
    }

    private final Violation violation;

    public PeerProtocolException(String message, Violation violation) {
        super(message);
        this.violation = java.util.Objects.requireNonNull(violation, "violation");
    }

    /** What the peer did. */
    public Violation violation() {
        return violation;
    }
}
