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
     * The first request not posted, from the provider's {@code bad_wr} index ({@code -1}: not set). Not set
     * means "unknown", and it can mean "all queued": rxe queues the whole chain, then rings the doorbell and
     * returns that write's error without setting bad_wr. So the whole chain counts as posted: its buffers
     * wait for their completions or flushes (the connection fails; the close's drain timeout bounds the wait
     * when none comes), never reused while the device may still read them.
     */
    public static int firstNotPosted(int badWrIndex, int count) {
        return badWrIndex < 0 ? count : Math.min(badWrIndex, count);
    }

    /**
     * Index in the chain of the first request not posted; when the device did not say ({@code bad_wr} not
     * set), the chain's length: everything is taken as posted (see {@link #firstNotPosted}).
     */
    public int failedIndex() {
        return failedIndex;
    }
}
