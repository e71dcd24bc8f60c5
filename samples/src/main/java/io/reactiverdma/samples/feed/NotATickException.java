package io.reactiverdma.samples.feed;

/** A datagram on the feed's group that is not a tick of this run; the message says what was wrong. */
public final class NotATickException extends RuntimeException {
    public NotATickException(String message) {
        super(message);
    }
}
