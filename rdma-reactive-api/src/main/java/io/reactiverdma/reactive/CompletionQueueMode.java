package io.reactiverdma.reactive;

/** How connections get their completion queue, and so their completion-poller thread. */
public enum CompletionQueueMode {
    /** Each connection has its own CQ and its own poller thread: isolation, one thread per connection. */
    PER_CONNECTION,
    /**
     * Connections on one device share CQs, each with one poller thread (a new shared CQ is added when the
     * ones there are cannot take another connection's queue depths): few threads for many connections.
     */
    SHARED
}
