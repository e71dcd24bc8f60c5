package io.reactiverdma.samples.bulk;

/**
 * A bulk transfer failed: {@link #reason()} says how, {@link #bytesConfirmed()} how far it got, the cause (when
 * there is one) what the connection reported. Failures before any transfer started (connecting, binding) are
 * the API's own exceptions.
 */
public class BulkTransferException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** How a transfer failed. */
    public enum Reason {
        /** The peer went away mid-transfer: its connection closed, or an operation on it failed. */
        PEER_GONE,
        /** No byte was confirmed for longer than the stall timeout (the peer hangs, or the network is gone). */
        STALLED,
        /** The peer refused the transfer (for example a window of chunks larger than it accepts). */
        REFUSED,
        /** The peer sent something the protocol does not allow. */
        PROTOCOL,
        /** Reading the source or writing the output file failed. */
        IO
    }

    private final Reason reason;
    private final long bytesConfirmed;

    public BulkTransferException(Reason reason, String message, long bytesConfirmed, Throwable cause) {
        super(message, cause);
        this.reason = java.util.Objects.requireNonNull(reason, "reason");
        this.bytesConfirmed = bytesConfirmed;
    }

    public Reason reason() {
        return reason;
    }

    /** The bytes that had reached the receiver (sender side) or been consumed (receiver side) when it failed. */
    public long bytesConfirmed() {
        return bytesConfirmed;
    }
}
