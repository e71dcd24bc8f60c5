package io.reactiverdma.samples.echo;

/**
 * The echo itself went wrong (the connection did not): a reply differed from the message sent, or none came
 * in time. Failures of the connection are the API's own exceptions ({@code ConnectionClosedException},
 * {@code RdmaConnectException} ...).
 */
public class EchoException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int messageIndex;

    public EchoException(String message, int messageIndex) {
        super(message);
        this.messageIndex = messageIndex;
    }

    /** The 0-based index of the message whose reply failed. */
    public int messageIndex() {
        return messageIndex;
    }

    /** A reply that is not byte for byte the message sent. */
    public static final class Mismatch extends EchoException {
        private static final long serialVersionUID = 1L;

        private final int offset;

        public Mismatch(String message, int messageIndex, int offset) {
            super(message, messageIndex);
            this.offset = offset;
        }

        /** The first offset at which the reply differs (the shorter length when only the lengths differ). */
        public int offset() {
            return offset;
        }
    }

    /** No reply within the reply timeout. */
    public static final class Timeout extends EchoException {
        private static final long serialVersionUID = 1L;

        public Timeout(String message, int messageIndex) {
            super(message, messageIndex);
        }
    }
}
