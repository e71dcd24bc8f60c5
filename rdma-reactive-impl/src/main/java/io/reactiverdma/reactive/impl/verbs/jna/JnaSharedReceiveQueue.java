package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue;
import io.reactiverdma.verbs.ReceiveWorkRequests;

/** A real SRQ; its async events are told apart by {@link #srq}'s address (see {@link JnaDevice}). */
final class JnaSharedReceiveQueue implements SharedReceiveQueue {
    final io.reactiverdma.verbs.SharedReceiveQueue srq;
    private final Runnable onClose;

    JnaSharedReceiveQueue(io.reactiverdma.verbs.SharedReceiveQueue srq, Runnable onClose) {
        this.srq = srq;
        this.onClose = onClose;
    }

    @Override
    public int maxWr() {
        return srq.grantedAttributes().maxWr();
    }

    @Override
    public void postReceive(ReceiveWorkRequests chain) {
        try {
            srq.postReceive(chain);
        } catch (NativeCallException e) {
            throw new PostRefusedException(e.getMessage(), e.errno(), PostRefusedException.firstNotPosted(chain.failedIndex(), chain.count()), e);
        }
    }

    @Override
    public void armLimit(int limit) {
        srq.armLimit(limit);
    }

    @Override
    public void close() {
        try {
            srq.close();
        } finally {
            onClose.run();
        }
    }
}
