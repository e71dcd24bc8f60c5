package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Device;

/**
 * A completion queue with its pending-operation table and its one poller thread. Connections reserve
 * entries (their send plus receive queue depths), so the CQ can never overflow and the table never runs
 * out of slots.
 */
public final class CompletionQueueHandle {
    public final CompletionQueue cq;
    public final PendingOperations pending;
    public final CompletionPoller poller;
    public final boolean shared;
    public final String key;
    private final int capacity;
    private int reserved;
    private boolean stopped;

    public CompletionQueueHandle(Device device, int entries, PollerIdleStrategy strategy, int batch, int vector,
            EngineMetrics metrics, String name, boolean shared, String key) {
        boolean events = strategy.kind() == PollerIdleStrategy.Kind.EVENT_DRIVEN;
        CompletionQueue source = device.createCompletionQueue(entries, events, batch, vector, name);
        this.cq = source;
        this.capacity = entries;
        this.pending = new PendingOperations(entries);
        this.poller = new CompletionPoller(name, source, pending, strategy, metrics);
        this.shared = shared;
        this.key = key;
        poller.start();
    }

    /** Reserves entries for a connection; never on a stopped CQ or one whose poller failed. */
    public synchronized boolean tryReserve(int entries) {
        if (stopped || poller.failure() != null || reserved + entries > capacity) {
            return false;
        }
        reserved += entries;
        return true;
    }

    /** Returns the entries; true when nothing is reserved any more. */
    public synchronized boolean unreserve(int entries) {
        reserved -= entries;
        return reserved == 0;
    }

    synchronized int reserved() {
        return reserved;
    }

    int capacity() {
        return capacity;
    }

    /**
     * Waits at most {@code timeoutMs} for a {@link #stop() stopped} poller to end (it then closed its CQ and the
     * QPs on it); true when it did.
     */
    public boolean awaitStopped(long timeoutMs) {
        return poller.awaitStopped(timeoutMs);
    }

    /**
     * Stops the poller, which then destroys the CQ itself (after every QP using it was destroyed). Does not
     * wait: safe under locks and on the poller thread.
     */
    public void stop() {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        poller.stop();
    }
}
