package io.reactiverdma.reactive.impl.verbs.jna;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.verbs.CompletionChannel;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.WakeupFd;
import io.reactiverdma.verbs.WorkCompletions;

/**
 * A real CQ, with a completion channel when the poller is event-driven. Polls into one reused
 * {@link WorkCompletions} flyweight: nothing is allocated per completion.
 */
final class JnaCompletionQueue implements CompletionQueue {
    private final io.reactiverdma.verbs.CompletionQueue cq;
    private final CompletionChannel channel;
    private final WakeupFd wakeup;
    private final WorkCompletions wcs;
    private int unacked;
    /** The index in {@link #wcs} of the completion being handed to the handler. */
    private int current;

    private final Runnable onClose;

    JnaCompletionQueue(VerbsContext context, int entries, int batch, boolean events, int vector, Runnable onClose) {
        this.onClose = onClose;
        CompletionChannel ch = null;
        WakeupFd w = null;
        io.reactiverdma.verbs.CompletionQueue q;
        try {
            if (events) {
                ch = context.createCompletionChannel();
                w = WakeupFd.create();
            }
            q = context.createCompletionQueue(entries, ch, vector);
        } catch (RuntimeException e) {
            if (ch != null) {
                ch.close();
            }
            if (w != null) {
                w.close();
            }
            throw e;
        }
        this.cq = q;
        this.channel = ch;
        this.wakeup = w;
        this.wcs = new WorkCompletions(batch);
    }

    io.reactiverdma.verbs.CompletionQueue cq() {
        return cq;
    }

    @Override
    public int poll(Handler handler) {
        int n = cq.poll(wcs);
        for (int i = 0; i < n; i++) {
            current = i;
            handler.onCompletion(wcs.qpNum(i), wcs.wrId(i), wcs.statusCode(i), wcs.opcodeCode(i), wcs.vendorErr(i),
                    engineLength(wcs.byteLen(i)), wcs.immData(i), wcs.wcFlags(i));
        }
        return n;
    }

    /**
     * byte_len (an unsigned 32-bit count) as the engine's int. Every buffer the engine posts is a Java buffer
     * (at most Integer.MAX_VALUE bytes), so a receive never reports more; only the completion of a larger
     * one-sided transfer could, and its count (used for the byte meters only) saturates instead of turning
     * negative.
     */
    static int engineLength(long byteLen) {
        return (int) Math.min(byteLen, Integer.MAX_VALUE);
    }

    @Override
    public int sourceQpn() {
        return wcs.srcQp(current);
    }

    @Override
    public boolean supportsEvents() {
        return channel != null;
    }

    @Override
    public void arm() {
        cq.requestNotify(false);
    }

    @Override
    public boolean await(long timeoutNs) {
        io.reactiverdma.verbs.CompletionQueue got = channel.awaitEvent(timeoutNs, wakeup);
        if (got == null) {
            return false;
        }
        // Acknowledge in batches: each ack is a call, and ibv_destroy_cq only needs the total right.
        if (++unacked >= 16) {
            cq.ackEvents(unacked);
            unacked = 0;
        }
        return true;
    }

    @Override
    public void wakeup() {
        if (wakeup != null) {
            try {
                wakeup.signal();
            } catch (io.reactiverdma.natives.ClosedResourceException closedAlready) {
                // the poller stopped and closed its source: nobody to wake
            }
        }
    }

    @Override
    public void close() {
        try {
            if (unacked > 0 && !cq.isClosed()) {
                cq.ackEvents(unacked);
                unacked = 0;
            }
            cq.close();
        } finally {
            if (channel != null) {
                channel.close();
            }
            if (wakeup != null) {
                wakeup.close();
            }
            onClose.run();
        }
    }
}
