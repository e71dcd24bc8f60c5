package io.reactiverdma.reactive;

import java.util.Objects;

/**
 * An operation was refused before anything was posted, because its arguments cannot work: the message says
 * what was wrong, and {@link #reason()} says it as a value a program can test.
 */
public class InvalidRequestException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /** What was wrong with the request. */
    public enum Reason {
        /** The message is larger than the receive buffers of the side that must receive it. */
        MESSAGE_TOO_LARGE,
        /** A local or remote range lies (partly) outside the registered memory it names. */
        OUTSIDE_REGION,
        /** An atomic's target is not 8-byte aligned. */
        MISALIGNED_ATOMIC,
        /** An atomic's target is not exactly 8 bytes long. */
        WRONG_ATOMIC_SIZE,
        /** A remote region was asked for memory registered without any remote access. */
        ACCESS_NOT_GRANTED,
        /** The buffer was released or its memory deregistered. */
        BUFFER_RELEASED,
        /** The buffer belongs to another device's memory than the connection's. */
        FOREIGN_BUFFER,
        /** Private data (of a connect, an accept, a reject reason) longer than the CM carries. */
        PRIVATE_DATA_TOO_LARGE,
        /** The device cannot do what was asked (for example memory windows on a device without them). */
        NOT_SUPPORTED,
        /** An argument outside its allowed range (a size, a count, a port number ...). */
        ILLEGAL_ARGUMENT,
        /**
         * An {@link RdmaOption} set on a role that does not use it (a server-only option on a client, a
         * connection option on a datagram endpoint ...): see {@link RdmaOption#roles()}.
         */
        OPTION_NOT_FOR_ROLE,
        /** A datagram was addressed to a multicast group the endpoint has not joined. */
        NOT_JOINED,
        /**
         * A {@code receive()} was subscribed while another subscriber of the same connection or endpoint is
         * still active: one subscriber at a time.
         */
        ALREADY_SUBSCRIBED
    }

    private final Reason reason;

    public InvalidRequestException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
