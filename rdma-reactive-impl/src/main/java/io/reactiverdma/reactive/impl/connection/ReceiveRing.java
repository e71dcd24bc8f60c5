package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.natives.Errno;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import reactor.util.annotation.Nullable;

import java.util.function.Consumer;

/**
 * A queue's receive buffers and the one post loop they share: a free list, each buffer's generation (see
 * {@link BufferGenerations}), and {@link #post(int)}, which posts free buffers as chains (one
 * {@code ibv_post_recv} or {@code ibv_post_srq_recv} per chain of up to {@code chain} work requests). Used by a
 * connection's own receive queue, a shared receive queue and a datagram endpoint alike.
 *
 * <p>A refused post gives back the refused buffer and those after it (the ones before it were posted and
 * complete like any other). {@code ENOMEM} means the queue is full for now: those buffers wait for the next
 * post. Any other refusal is kept for the caller ({@link #refusal()}): its queue cannot go on.
 *
 * <p>Not thread-safe: every method runs on the owner's poller thread. Posting allocates nothing.
 */
public final class ReceiveRing {
    private final String description;
    private final EngineBuffer[] buffers;
    private final int bufferSize;
    private final BufferGenerations generations;
    private final int[] free;
    private int freeCount;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final Consumer<ReceiveWorkRequests> poster;
    private final ReceiveWorkRequests wr;
    private final PendingOperation[] batch;
    @Nullable
    private RuntimeException refusal;

    /**
     * A ring over {@code buffers} (each {@code bufferSize} bytes, all free), posted by {@code poster}
     * ({@code QueuePair::postReceive} or {@code SharedReceiveQueue::postReceive}) in chains of at most
     * {@code chain}; each posted receive is a pending operation of {@code target} whose buffer index is its
     * {@code receiveIndex}.
     */
    public ReceiveRing(String description, EngineBuffer[] buffers, int bufferSize, int chain, PendingOperations pending,
            CompletionTarget target, Consumer<ReceiveWorkRequests> poster) {
        this.description = description;
        this.buffers = buffers;
        this.bufferSize = bufferSize;
        int depth = buffers.length;
        this.generations = new BufferGenerations(description, depth);
        this.free = new int[depth];
        for (int i = 0; i < depth; i++) {
            free[i] = depth - 1 - i;
        }
        this.freeCount = depth;
        this.pending = pending;
        this.target = target;
        this.poster = poster;
        int links = Math.max(1, Math.min(depth, chain));
        this.wr = new ReceiveWorkRequests(links, 1);
        this.batch = new PendingOperation[links];
    }

    /** How many buffers the ring has. */
    public int depth() {
        return buffers.length;
    }

    public int bufferSize() {
        return bufferSize;
    }

    /** Buffers neither posted nor held by a message. */
    public int freeCount() {
        return freeCount;
    }

    public EngineBuffer buffer(int index) {
        return buffers[index];
    }

    /** The generation to stamp on a message landing in buffer {@code index} now. */
    public int generation(int index) {
        return generations.current(index);
    }

    /**
     * Posts up to {@code n} free buffers, in chains, and returns how many were posted. It stops at the first
     * refusal: {@code ENOMEM} leaves the rest free for a later post; any other refusal is kept in
     * {@link #refusal()} (cleared by the next post).
     */
    public int post(int n) {
        refusal = null;
        int total = 0;
        int left = Math.min(n, freeCount);
        while (left > 0) {
            int links = Math.min(left, batch.length);
            int accepted = postChain(links);
            total += accepted;
            left -= accepted;
            if (accepted < links) {
                break;
            }
        }
        return total;
    }

    private int postChain(int n) {
        wr.clear();
        long now = System.nanoTime();
        for (int k = 0; k < n; k++) {
            int index = free[--freeCount];
            PendingOperation p = pending.acquire(target, OperationType.RECEIVE, null, index, now);
            batch[k] = p;
            EngineBuffer b = buffers[index];
            wr.add(p.wrId(), b.address(), bufferSize, b.lkey());
        }
        int accepted = n;
        try {
            poster.accept(wr);
        } catch (PostRefusedException e) {
            accepted = Math.min(e.failedIndex(), n);
            refusal = e.errno() == Errno.ENOMEM ? null : e;
        } catch (RuntimeException e) {
            accepted = 0;
            refusal = e;
        }
        for (int k = accepted; k < n; k++) {
            free[freeCount++] = batch[k].receiveIndex;
            pending.free(batch[k]);
        }
        for (int k = 0; k < n; k++) {
            batch[k] = null;
        }
        return accepted;
    }

    /** The last post's refusal other than {@code ENOMEM}, or null. */
    @Nullable
    public RuntimeException refusal() {
        return refusal;
    }

    /** Buffer {@code index} is free again without a message having been taken from it (flushed, dropped). */
    public void free(int index) {
        free[freeCount++] = index;
    }

    /**
     * Buffer {@code index} came back from a message of {@code generation}: its generation moves on (every
     * handle of that message is stale from now on) and it is free again.
     *
     * @throws IllegalStateException for a stale generation: the buffer was given back already
     */
    public void giveBack(int index, int generation) {
        generations.giveBack(index, generation);
        free[freeCount++] = index;
    }

    /**
     * Like {@link #giveBack}, but the buffer is done with (its queue finished): it is released instead of
     * freed.
     */
    public void retire(int index, int generation) {
        generations.giveBack(index, generation);
        buffers[index].release();
    }

    /** Releases every free buffer (its queue finished) and returns how many. */
    public int releaseFree() {
        int n = freeCount;
        for (int k = 0; k < n; k++) {
            buffers[free[k]].release();
        }
        freeCount = 0;
        return n;
    }

    @Override
    public String toString() {
        return description;
    }
}
