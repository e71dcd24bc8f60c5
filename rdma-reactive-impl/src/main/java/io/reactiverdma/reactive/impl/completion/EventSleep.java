package io.reactiverdma.reactive.impl.completion;

/**
 * The event-driven poller's sleep and the wake-up of it, a protocol that loses no wake-up: the poller
 * publishes {@link #sleeping}, arms the CQ, polls once more and checks for work handed over, and only then
 * awaits; a thread that handed work over reads {@link #sleeping} after publishing the work and signals the
 * channel's wake-up when it is set. Both sides write before they read (Dekker), so at least one sees the
 * other: either the poller finds the work, or the waker signals (the wake-up is sticky, like the eventfd it
 * is: an await that starts after it returns at once). A completion that arrives before the arm raises no
 * event, so the poll after the arm finds it; one that arrives after the arm raises one.
 *
 * <p>Model-checked by {@code EventSleepModelCheck} (docs/threading-model.md).
 */
class EventSleep {
    /** What the protocol needs of the CQ and of the poller (the poller implements it once: no allocation). */
    interface Channel {
        /** Requests an event for the next completion ({@code ibv_req_notify_cq}). */
        void arm();

        /** Polls the CQ once and handles what it found; returns how many completions. */
        int poll();

        /** Work handed over, a flush waiting, or a stop asked for: the poller must not sleep. */
        boolean hasWork();

        /** Waits for a completion event or a wake-up, at most {@code timeoutNs}. */
        void await(long timeoutNs);

        /** Ends an await now or, if none runs, the next one ({@link CompletionPoller#execute}'s wake-up). */
        void wakeup();
    }

    final Channel channel;
    final long maxSleepNs;
    /** Set from before the arm until after the await: a waker must signal the channel. */
    volatile boolean sleeping;

    EventSleep(Channel channel, long maxSleepNs) {
        this.channel = channel;
        this.maxSleepNs = maxSleepNs;
    }

    /**
     * Poller thread, after a cycle without work: sleeps until a completion event or a wake-up, unless a
     * completion or work is found after arming. Returns the completions handled by the poll after arming.
     */
    int sleep() {
        sleeping = true;
        try {
            channel.arm();
            // Poll once more after arming: a completion that arrived before the arm raises no event.
            int n = channel.poll();
            if (n > 0 || channel.hasWork()) {
                return n;
            }
            channel.await(maxSleepNs);
            return 0;
        } finally {
            sleeping = false;
        }
    }

    /**
     * Any thread, after it published work for the poller: wakes the poller if it sleeps or is about to.
     * Returns whether it signalled the channel.
     */
    boolean wake() {
        if (sleeping) {
            channel.wakeup();
            return true;
        }
        return false;
    }
}
