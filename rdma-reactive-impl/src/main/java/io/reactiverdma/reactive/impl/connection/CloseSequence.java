package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PeerProtocolException;
import io.reactiverdma.reactive.RdmaCompletionException;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;

/**
 * How one connection ends once it is CLOSING (see {@link EngineConnection}'s class comment): waiting work
 * fails, the rdma_cm thread moves the QP to ERR and its posted work flushes; when nothing is outstanding, or
 * after {@link #DRAIN_TIMEOUT}, or at once when the poller failed, the rdma_cm thread deallocates the memory
 * windows bound to the QP, destroys the QP and the id; then, back on the poller thread, what is still pending
 * fails, receive() completes, everything else is given back and CLOSED is emitted.
 *
 * <p>Poller thread, except where a method says rdma_cm thread.
 */
final class CloseSequence {
    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(5);

    private final EngineConnection c;
    private boolean releasing;
    private ScheduledFuture<?> drainWatchdog;

    CloseSequence(EngineConnection c) {
        this.c = c;
    }

    /** The error of an operation the closing or closed connection refuses ("refused", "not posted", ...). */
    ConnectionClosedException closedError(String what) {
        Throwable cause = c.closeCause();
        return cause != null
                ? new ConnectionClosedException(c.description() + " is closed: operation " + what, cause)
                : new ConnectionClosedException(c.description() + " is closed: operation " + what);
    }

    /** The connection just became CLOSING: nothing more is posted, and the QP goes to ERR. */
    void begin() {
        assert OwnerThread.check(c.poller);
        c.send.close();
        c.receive.close();
        c.handshake.close();
        c.cm.execute(this::disconnect);
        drainWatchdog = EngineTimer.schedule(() -> c.poller.execute(this::drainTimedOut), DRAIN_TIMEOUT);
        drained();
    }

    /** rdma_cm thread: move the QP to ERR so everything posted flushes. */
    private void disconnect() {
        c.unaccepted.rejectNow();
        try {
            c.id.disconnect();
        } catch (RuntimeException notConnected) {
            // Never connected (or the peer is gone): flush the QP ourselves.
            try {
                c.resources.qp.toError();
            } catch (RuntimeException e) {
                EngineLog.debug(c.description() + ": moving the QP to ERR failed: " + e);
            }
        }
    }

    /** Once nothing is outstanding any more, the release starts. */
    void drained() {
        assert OwnerThread.check(c.poller);
        if (c.state() == EngineConnection.State.CLOSING && !releasing && c.send.outstanding() == 0
                && c.receive.outstanding() == 0 && c.handshake.outstanding() == 0) {
            release();
        }
    }

    private void drainTimedOut() {
        if (c.state() != EngineConnection.State.CLOSING || releasing) {
            return;
        }
        EngineLog.warn(c.description() + ": " + (c.send.outstanding() + c.receive.outstanding())
                + " work requests not flushed within " + DRAIN_TIMEOUT + "; destroying the QP and failing them");
        release();
    }

    /**
     * The rdma_cm thread destroys the QP and the id; then, back here, what is still pending (flushes that
     * never came) fails and everything else is given back. At once, without waiting for flushes, when the
     * poller failed (no completion will come).
     */
    void release() {
        assert OwnerThread.check(c.poller);
        if (releasing) {
            return;
        }
        releasing = true;
        if (drainWatchdog != null) {
            drainWatchdog.cancel(false);
        }
        Runnable destroy = () -> {
            c.unaccepted.rejectNow(); // a release without the close's disconnect (its poller failed)
            c.cm.unregister(c.id);
            c.resources.deallocateWindow();
            c.windows.deallocateAll();
            try {
                c.id.destroyQueuePair();
            } catch (RuntimeException e) {
                EngineLog.error(c.description() + ": rdma_destroy_qp failed", e);
            }
            try {
                c.id.close();
            } catch (RuntimeException e) {
                EngineLog.error(c.description() + ": rdma_destroy_id failed", e);
            }
            c.poller.execute(this::finish);
        };
        if (c.receive.isShared()) {
            // On a shared receive queue the QP (in ERR: the disconnect was queued before) is destroyed only once
            // it consumes no more SRQ receives and the completions of those it did are polled: mlx providers
            // drop a destroyed QP's unpolled completions, and their SRQ receives with them.
            c.cm.execute(() -> c.poller.execute(() -> c.receive.beforeDestroy(() -> c.cm.execute(destroy))));
        } else {
            c.cm.execute(destroy);
        }
    }

    /** After the QP and the id are gone. */
    private void finish() {
        assert OwnerThread.check(c.poller);
        c.send.abandonPosted();
        for (PendingOperation p : c.resources.cq.pending.snapshotInUse()) {
            if (p.connection == c) {
                if (p.operation instanceof CreditWordHandshake.Step) {
                    c.handshake.abandoned(p);
                } else if (p.type == OperationType.RECEIVE) {
                    c.receive.abandonPosted(p);
                }
            }
        }
        c.closed();
        Throwable cause = c.closeCause();
        // A peer that broke the protocol: the handler's receive() says how (PeerProtocolException).
        boolean failed = cause instanceof RdmaCompletionException || cause instanceof PeerProtocolException
                || c.poller.failure() != null;
        c.receive.finish(failed ? cause : null);
        c.windows.endAll();
        c.resources.device.unregister(c.resources.qp.qpNum(), c);
        c.resources.release();
        c.poller.detach(c);
        c.metrics.connections(-1);
        c.announceClosed();
    }
}
