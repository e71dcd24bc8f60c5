package io.reactiverdma.samples.kv;

import java.util.Objects;

/**
 * A key-value operation failed for a reason of the key-value service itself (the connection did not fail:
 * that is the API's own {@code ConnectionClosedException}, {@code RdmaCompletionException} ...). The message
 * says what was wrong; {@link #reason()} says it as a value a program can test.
 */
public class KvException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a key-value operation failed. */
    public enum Reason {
        /** {@code download} of a key that has no value. ({@code get} emits nothing instead.) */
        NOT_FOUND,
        /** The key is empty or longer (in UTF-8) than the table's slots hold. Refused before anything is sent. */
        KEY_TOO_LONG,
        /** The value is larger than the server's largest value. Refused before anything is sent. */
        VALUE_TOO_LARGE,
        /** No free slot within the key's probe window: the table is (locally) full. */
        TABLE_FULL,
        /** The value area has no free block of the value's size class. */
        VALUE_AREA_FULL,
        /** Every counter word is taken. */
        COUNTERS_FULL,
        /**
         * The entry changed while it was read: {@code download} saw a new version mid-stream, or {@code get}
         * found it changing on every one of its bounded attempts.
         */
        CONCURRENT_MODIFICATION,
        /** An argument outside its range (a chunk size, a negative count ...). Refused before anything is sent. */
        ILLEGAL_ARGUMENT,
        /** A message that does not follow the protocol (wrong magic, truncated, unknown request id ...). */
        PROTOCOL,
        /** The server could not carry out the request (for example its RDMA READ of the value failed). */
        SERVER_ERROR,
        /**
         * Local: every registered buffer this client stages large PUTs in is in use (as many large PUTs wait for
         * the server). Nothing was sent; retrying later may succeed.
         */
        BUSY
    }

    private final Reason reason;

    public KvException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }

    @Override
    public String toString() {
        return "KvException(" + reason + "): " + getMessage();
    }
}
