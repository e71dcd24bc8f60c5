package io.reactiverdma.reactive;

import java.net.InetSocketAddress;

/**
 * Where the engine reports what it measures, for a client or server configured with
 * {@link RdmaClient#metrics(boolean, java.util.function.Supplier)} (Reactor Netty's
 * {@code metrics(boolean, Supplier<ChannelMetricsRecorder>)} hook). Names no metrics library:
 * {@link io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder} is the Micrometer one, and an application
 * may write its own.
 * <p>
 * The engine calls these methods on its own threads (the completion poller, the rdma_cm event thread), often
 * and concurrently: they must be thread-safe, must not block, and should not allocate. An exception thrown
 * here is not caught: it breaks the poller. {@code device} is the RDMA device's name ({@code rxe0},
 * {@code mlx5_0}); {@code remote} the peer's address, null when the engine does not know it.
 */
public interface RdmaMetricsRecorder {
    /** How a work request ended. */
    enum Outcome {
        /** Completed successfully. */
        SUCCESS,
        /** An error completion (the connection closes). */
        ERROR,
        /** Flushed ({@code WR_FLUSH_ERR}): the connection was closing. */
        FLUSHED;

        /** The lower-case name used as the {@code outcome} tag value. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * A work request completed. {@code latencyNanos} is post to completion (successes only, else 0);
     * {@code bytes} the payload of a successful one (0 otherwise).
     */
    void recordOperation(String device, InetSocketAddress remote, OperationType op, Outcome outcome,
            long latencyNanos, long bytes);

    /** An error completion other than a flush; {@code status} is the {@code ibv_wc_status} name without {@code IBV_WC_}. */
    void recordCompletionError(String device, InetSocketAddress remote, String status);

    /** A non-empty poll of a completion queue on {@code device} returned {@code completions}. */
    void recordPollBatch(String device, int completions);

    /** A completion named no live operation (should not happen). */
    void recordStaleCompletion(String device);

    /** Work requests posted and not yet completed changed by {@code delta}. */
    void outstandingChanged(String device, InetSocketAddress remote, int delta);

    /** Connections (from queue-pair creation until their close finished) changed by {@code delta}. */
    void connectionsChanged(String device, InetSocketAddress remote, int delta);

    /** Connections whose next message waits for the peer's credits changed by {@code delta}. */
    void creditsWaitingChanged(String device, InetSocketAddress remote, int delta);

    /** What happened to a datagram, for {@link #recordDatagram}. */
    enum DatagramOutcome {
        /** Transmitted by the local device. */
        SENT,
        /** Delivered to a subscriber. */
        RECEIVED,
        /** Dropped by this side (no subscriber, or a receive error). */
        DROPPED,
        /** A send that completed in error. */
        SEND_FAILED;

        /** The lower-case name used as the {@code outcome} tag value. */
        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    /** A datagram endpoint on {@code device} sent, received or dropped a datagram of {@code bytes} payload bytes. */
    default void recordDatagram(String device, DatagramOutcome outcome, long bytes) {
    }

    /** Multicast groups joined by datagram endpoints on {@code device} changed by {@code delta}. */
    default void multicastGroupsChanged(String device, int delta) {
    }

    /** Address handles held by datagram endpoints on {@code device} (peers, reply senders, groups) changed by {@code delta}. */
    default void addressHandlesChanged(String device, int delta) {
    }

    /**
     * A datagram endpoint on {@code device} evicted a peer's address handle: it held
     * {@link RdmaOption#DATAGRAM_ADDRESS_HANDLES} and needed another.
     */
    default void addressHandleEvicted(String device) {
    }

    /**
     * Registered memory pinned for receive buffers on {@code device} (connections' own buffers and shared
     * receive queues') changed by {@code deltaBytes}. Does nothing unless overridden.
     */
    default void receiveMemoryChanged(String device, long deltaBytes) {
    }

    /**
     * Memory registered by {@code device}'s buffer pool (pooled slabs, and what {@code RdmaMemory.register}
     * and {@code allocateRegistered} registered) changed by {@code deltaBytes}: what is pinned now. Does
     * nothing unless overridden.
     */
    default void registeredMemoryChanged(String device, long deltaBytes) {
    }

    /**
     * {@code device}'s buffer pool deregistered and freed {@code count} idle slabs (see
     * docs/memory-and-buffers.md). Does nothing unless overridden.
     */
    default void slabsReleased(String device, int count) {
    }
}
