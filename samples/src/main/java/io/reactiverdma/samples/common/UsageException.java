package io.reactiverdma.samples.common;

/** A bad command line: the message says what is wrong; a sample's main class prints it with the usage and exits 2. */
public final class UsageException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
