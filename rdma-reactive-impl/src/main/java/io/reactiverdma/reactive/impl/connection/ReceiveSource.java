package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import reactor.util.annotation.Nullable;

/**
 * Where a connection's receive buffers come from, for its {@link ReceiveQueue}: its own receive queue
 * ({@link OwnReceives}) or its share of a server's shared receive queue ({@link SharedReceiveMember}). The
 * receive queue delivers; the source posts, takes buffers back and ends, so that nothing in the receive queue
 * asks which of the two it has.
 *
 * <p>Not thread-safe: every method runs on the connection's poller thread.
 */
interface ReceiveSource {
    /** The receive queue this source feeds (set once, when the queue is made). */
    void attach(ReceiveQueue queue);

    /**
     * Makes receives available for the demand {@code flow} does not cover yet ({@code undelivered} messages
     * wait for the subscriber): posts its own buffers, or takes credits from the shared queue. Returns how
     * many were posted or credited now.
     */
    int post(FlowControl flow, int undelivered);

    /** A message's buffer {@code index} of {@code generation} came back; {@code finished}: its queue is done. */
    void giveBack(int index, int generation, boolean finished);

    /**
     * The buffer a decoder is lent a message in: null for a buffer of the connection's own, whose view the
     * {@link LentMessage} made once; the buffer itself otherwise.
     */
    @Nullable
    EngineBuffer lendable(EngineBuffer buffer);

    /** A receive this connection posted completed (its own receive queue's completions only). */
    void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags);

    /** A receive this connection posted whose completion will never come (its QP was destroyed first). */
    void abandonPosted(PendingOperation p);

    /** Receives this connection posted and not completed yet. */
    int outstanding();

    /** The queue finished (its QP destroyed): free buffers go back, or the shared queue's share is given up. */
    void finish();

    /** QP_LAST_WQE_REACHED for the connection's QP (a QP on a shared receive queue only reports it). */
    void lastWorkRequestReached();

    /**
     * Whether the closing connection's QP may be destroyed only through {@link #beforeDestroy} (a QP on a
     * shared receive queue: its consumed receives must be polled first).
     */
    boolean drainsBeforeDestroy();

    /** Runs {@code destroy} once the QP may be destroyed (see {@link #drainsBeforeDestroy()}). */
    void beforeDestroy(Runnable destroy);
}
