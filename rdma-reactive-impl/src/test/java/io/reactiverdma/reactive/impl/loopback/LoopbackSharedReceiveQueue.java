package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.ReceiveWorkRequests;

import java.util.ArrayDeque;

/**
 * A shared receive queue as rxe has it: QPs created with it take their receives from it in posting order
 * (a QP on it has no receive queue of its own, so an empty SRQ means RNR for the sender); its receives are
 * not flushed when one of those QPs enters ERR; an armed limit raises one {@code SRQ_LIMIT_REACHED} async
 * event when fewer receives than the limit remain, then disarms.
 */
public final class LoopbackSharedReceiveQueue implements SharedReceiveQueue {
    final LoopbackProtectionDomain pd;
    private final int maxWr;
    /** Fabric lock. */
    final ArrayDeque<LoopbackQueuePair.RecvWqe> queue = new ArrayDeque<>();
    private int limit;
    private boolean destroyed;
    private long limitEvents;

    LoopbackSharedReceiveQueue(LoopbackProtectionDomain pd, int maxWr) {
        this.pd = pd;
        this.maxWr = maxWr;
        pd.device.resources.add(LoopbackResources.Kind.SHARED_RECEIVE_QUEUE, this, toString());
    }

    @Override
    public int maxWr() {
        return maxWr;
    }

    @Override
    public void postReceive(ReceiveWorkRequests chain) {
        LoopbackStack stack = pd.stack;
        synchronized (stack.lock) {
            if (destroyed) {
                throw new PostRefusedException("ibv_post_srq_recv failed: the SRQ was destroyed", Errnos.EINVAL, 0, null);
            }
            for (int i = 0; i < chain.count(); i++) {
                int numSge = chain.numSge(i);
                if (numSge < 0 || numSge > 1) {
                    throw new PostRefusedException("ibv_post_srq_recv failed: " + numSge + " SGEs (max 1)",
                            Errnos.EINVAL, i, null);
                }
                if (queue.size() >= maxWr) {
                    throw new PostRefusedException("ibv_post_srq_recv failed: SRQ full (" + maxWr + ")",
                            Errnos.ENOMEM, i, null);
                }
                boolean hasSge = numSge == 1;
                queue.add(new LoopbackQueuePair.RecvWqe(chain.wrId(i), hasSge, hasSge ? chain.sgeAddr(i, 0) : 0,
                        hasSge ? chain.sgeLength(i, 0) : 0, hasSge ? chain.sgeLkey(i, 0) : 0));
                pd.device.resources.outstanding(1);
            }
            // Senders waiting on RNR for a QP of this SRQ retry on their own timer, as on the wire.
        }
    }

    /** Takes the oldest receive for a QP of this SRQ (fabric lock held); raises the limit event when due. */
    LoopbackQueuePair.RecvWqe take() {
        LoopbackQueuePair.RecvWqe r = queue.poll();
        if (r != null && limit > 0 && queue.size() < limit) {
            limit = 0;
            limitEvents++;
            pd.device.raise(new AsyncEventInfo(AsyncEventType.SRQ_LIMIT_REACHED, -1, -1, null, this));
        }
        return r;
    }

    @Override
    public void armLimit(int limit) {
        if (limit < 1 || limit > maxWr) {
            throw Errnos.fail("ibv_modify_srq", Errnos.EINVAL, "srq_limit " + limit + " (max_wr " + maxWr + ")");
        }
        synchronized (pd.stack.lock) {
            this.limit = limit;
        }
    }

    /** Receives posted and not taken yet. */
    public int posted() {
        synchronized (pd.stack.lock) {
            return queue.size();
        }
    }

    /** Limit events raised so far. */
    public long limitEvents() {
        synchronized (pd.stack.lock) {
            return limitEvents;
        }
    }

    @Override
    public void close() {
        synchronized (pd.stack.lock) {
            if (destroyed) {
                return;
            }
            for (LoopbackQueuePair q : pd.queuePairs) {
                if (q.srq == this) {
                    throw Errnos.fail("ibv_destroy_srq", Errnos.EBUSY, q + " still uses " + this);
                }
            }
            destroyed = true;
            pd.device.resources.outstanding(-queue.size());
            queue.clear();
        }
        pd.device.resources.remove(LoopbackResources.Kind.SHARED_RECEIVE_QUEUE, this);
    }

    boolean isDestroyed() {
        return destroyed;
    }

    @Override
    public String toString() {
        return "srq@" + pd.device.name() + "#" + Integer.toHexString(System.identityHashCode(this));
    }
}
