package io.reactiverdma.reactive.impl.verbs;

/**
 * {@code ibv_post_send} or {@code ibv_post_recv} refused a work request of a chain: the requests before
 * {@link #failedIndex()} were posted (they will complete), that one and the ones after it were not.
 */
public final class PostRefusedException extends RuntimeException {
    private final int errno;
    private final int failedIndex;

    public PostRefusedException(String message, int errno, int failedIndex, Throwable cause) {
        super(message, cause);
        this.errno = errno;
        this.failedIndex = failedIndex;
    }

    /** The errno the call returned (ENOMEM: queue full; EINVAL: a malformed request). */
    public int errno() {
        return errno;
    }

    /**
     * Index in the chain of the first request not posted; when the device did not say ({@code bad_wr} not
     * set), 0: nothing is taken as posted.
     */
    public int failedIndex() {
        return failedIndex;
    }
}
