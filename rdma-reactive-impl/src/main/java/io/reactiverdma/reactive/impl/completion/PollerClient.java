package io.reactiverdma.reactive.impl.completion;

/**
 * What a {@link CompletionPoller} owns besides its completion queue: the connections whose state only its
 * thread touches. When the poller can no longer poll, it tells each of them, on its own thread.
 */
public interface PollerClient {
    /**
     * The poller stopped polling because of {@code cause} (its CQ failed, or a call on it threw): no
     * completion will arrive any more. Called on the poller thread, which still runs tasks, so the client
     * can close itself there.
     */
    void pollerFailed(Throwable cause);

    /**
     * The client waits for the peer's credits: re-read them. {@link CompletionPoller#STILL_WAITING} keeps it
     * registered, {@link CompletionPoller#PROGRESSED} and {@link CompletionPoller#DONE} drop it.
     */
    int recheckCredits();

    /**
     * Posts what this cycle made ready (requested with {@link CompletionPoller#requestFlush}): the poller
     * calls it once per duty cycle, after the completions and tasks, so that everything that became ready in
     * one cycle goes to the device as one chained post (one doorbell). Returns the work requests posted.
     */
    default int flush() {
        return 0;
    }
}
