package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.PeerProtocolException;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;
import io.reactiverdma.reactive.impl.verbs.QueuePair;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * One connection's membership of a {@link SharedReceives}, as its {@link ReceiveQueue}'s source: its share
 * of the shared queue's credits ({@link CreditAllotment}), the receive kept for its peer's hello and the
 * bounded wait for that hello, the close of a peer that sends without a credit, and the wait for
 * {@code QP_LAST_WQE_REACHED} before its QP is destroyed.
 *
 * <p>Not thread-safe: every method runs on the shared queue's poller thread (which is the connection's),
 * except {@link #leave()}, which hands itself over.
 */
final class SharedReceiveMember extends CreditAllotment.Share implements ReceiveSource {
    final int qpNum;
    private final SharedReceives srq;
    private final QueuePair qp;
    final Consumer<Throwable> fail;
    /** How long a kept receive waits for the peer's hello before the connection is closed. */
    private final Duration helloDeadline;
    private ReceiveQueue receive;
    /** The peer's hello is awaited: the first message to arrive is taken as the hello, and this runs. */
    private Runnable peerHello;
    private boolean helloExpected;
    /** Runs when a posted receive is kept for the peer's hello (while it waits for one). */
    private Runnable helloKept;
    private boolean helloBacked;
    private ScheduledFuture<?> helloTimer;
    /** Its peer sent without a credit: its QP was moved to ERR and its connection is closing. */
    private boolean offended;
    /** QP_LAST_WQE_REACHED came: its QP consumes no more receives of the SRQ. */
    private boolean lastWqeReached;
    /** The destruction of its QP, waiting for {@link #lastWqeReached}. */
    private Runnable pendingDestroy;
    private ScheduledFuture<?> destroyTimer;

    SharedReceiveMember(SharedReceives srq, QueuePair qp, Consumer<Throwable> fail, Duration helloDeadline) {
        this.srq = srq;
        this.qpNum = qp.qpNum();
        this.qp = qp;
        this.fail = fail;
        this.helloDeadline = helloDeadline;
    }

    @Override
    public void attach(ReceiveQueue queue) {
        this.receive = queue;
    }

    ReceiveQueue receive() {
        return receive;
    }

    SharedReceives owner() {
        return srq;
    }

    /**
     * Allots credits for the demand {@code flow} does not cover yet; waits its turn for the rest. Returns
     * the credits allotted now. No credit is taken before the peer's hello: it could not be advertised yet, and
     * held unadvertised it would keep other connections' hellos from being given a receive.
     */
    @Override
    public int post(FlowControl flow, int undelivered) {
        assert OwnerThread.check(srq.poller());
        if (peerHello != null) {
            return 0;
        }
        CreditAllotment allotment = srq.allotment();
        int n = flow.receivesToPost(allotment.available(this), undelivered);
        if (n > 0) {
            allotment.grant(this, n);
            flow.receivesPosted(n);
        }
        if (!left && flow.receivesToPost(Integer.MAX_VALUE, undelivered) > 0) {
            allotment.await(this);
            srq.refill(); // free buffers not posted yet are credits to give now
        }
        return n;
    }

    /** A message of this connection's was released: its buffer goes back to the SRQ. */
    @Override
    public void giveBack(int index, int generation, boolean finished) {
        assert OwnerThread.check(srq.poller());
        srq.released(this, index, generation);
    }

    @Override
    public EngineBuffer lendable(EngineBuffer buffer) {
        return buffer; // a view of an SRQ buffer is made for each message
    }

    @Override
    public void completed(int index, boolean success, int opcode, int byteLen, int imm, int wcFlags) {
        throw new IllegalStateException(receive.description() + ": a receive of its shared receive queue completes "
                + "there, not on the connection");
    }

    @Override
    public void abandonPosted(PendingOperation p) {
        throw new IllegalStateException(receive.description() + ": it posts no receive of its own");
    }

    @Override
    public int outstanding() {
        return 0; // the SRQ's receives are the SRQ's
    }

    /** The connection is gone (its QP destroyed): its credits go back after the completions already queued. */
    @Override
    public void finish() {
        srq.leave(this);
    }

    /**
     * On a shared receive queue the peer's hello (see {@code CreditWordHandshake}) lands in an SRQ buffer,
     * not in a receive of the handshake's own: the first message to arrive is taken as the hello and
     * {@code arrived} runs instead of delivering it. A posted receive is kept for it: {@code receiveKept} runs
     * once one is (now, or when the SRQ is refilled), and only then may this side say its own hello.
     */
    void expectPeerHello(Runnable arrived, Runnable receiveKept) {
        assert OwnerThread.check(srq.poller());
        this.peerHello = arrived;
        if (helloExpected) {
            return;
        }
        helloExpected = true;
        srq.allotment().reserveHello();
        if (!srq.keepReceiveForHello(this)) {
            helloKept = receiveKept;
        } else {
            backed(receiveKept);
        }
    }

    /** Called by the SRQ for a message of this connection: true when it was the awaited hello. */
    boolean takePeerHello() {
        Runnable r = peerHello;
        if (r == null) {
            return false;
        }
        peerHello = null;
        r.run();
        return true;
    }

    /** The SRQ's refill kept a posted receive for the hello this member waited for. */
    void receiveKeptForHello() {
        Runnable kept = helloKept;
        helloKept = null;
        backed(kept != null ? kept : () -> { });
    }

    /** A posted receive is kept for the peer's hello: the peer is accepted now ({@code kept}). */
    private void backed(Runnable kept) {
        helloBacked = true;
        kept.run();
    }

    /**
     * The connection is ESTABLISHED: its peer must say its hello within the deadline, or its connection
     * closes and the receive kept for it serves the next one. Without this, peers that never say it would
     * keep their receives for as long as they stay connected. (From ESTABLISHED, not from the accept: under
     * load the accept may wait its turn on the rdma_cm thread.)
     */
    void established() {
        assert OwnerThread.check(srq.poller());
        if (helloExpected && helloTimer == null) {
            helloTimer = EngineTimer.schedule(() -> srq.poller().execute(this::helloTimedOut), helloDeadline);
        }
    }

    private void helloTimedOut() {
        if (helloExpected && helloBacked && !left) {
            PeerProtocolException e = new PeerProtocolException(receive.description() + ": the peer sent no hello "
                    + "within " + helloDeadline + " (ACCEPT_TIMEOUT) of ESTABLISHED; closed so that the receive kept "
                    + "for it on the " + srq + " serves another", PeerProtocolException.Violation.HELLO_TIMEOUT);
            EngineLog.warn(e.getMessage());
            fail.accept(e);
        }
    }

    /** The hello arrived, or (the connection left first) will not be counted. */
    void helloDone(boolean arrived) {
        assert OwnerThread.check(srq.poller());
        if (helloExpected) {
            helloExpected = false;
            helloKept = null;
            srq.noLongerWaitingForHello(this);
            srq.allotment().helloDone(helloBacked, arrived);
            helloBacked = false;
            if (helloTimer != null) {
                helloTimer.cancel(false);
                helloTimer = null;
            }
        }
    }

    /**
     * Its peer sent a message without a credit, which took a receive that may have been promised to
     * another connection: the QP goes to ERR now, on this thread (not later through the rdma_cm thread),
     * so that it takes no more of them, and the connection closes.
     */
    void sentWithoutCredit() {
        assert OwnerThread.check(srq.poller());
        if (offended) {
            return;
        }
        offended = true;
        if (!receive.isClosing()) { // before the close, the QP surely exists: its destruction follows it
            try {
                qp.toError();
            } catch (RuntimeException e) {
                EngineLog.debug(receive.description() + ": moving the QP to ERR failed: " + e);
            }
        }
        PeerProtocolException e = new PeerProtocolException(receive.description() + ": the peer sent a message "
                + "without a credit (it overran its share of the " + srq + "); not delivered",
                PeerProtocolException.Violation.SENT_WITHOUT_CREDIT);
        EngineLog.warn(e.getMessage());
        fail.accept(e);
    }

    @Override
    public boolean drainsBeforeDestroy() {
        return true;
    }

    /**
     * Runs {@code destroy} once the QP (in ERR) may be destroyed: after QP_LAST_WQE_REACHED (or
     * {@link SharedReceives#LAST_WQE_WAIT} without it) and a poll that empties the CQ, so every receive it
     * consumed is handled first (the IB spec's order for a QP on an SRQ; mlx providers drop a destroyed QP's
     * unpolled completions, and their SRQ receives would be lost).
     */
    @Override
    public void beforeDestroy(Runnable destroy) {
        assert OwnerThread.check(srq.poller());
        pendingDestroy = destroy;
        if (lastWqeReached) {
            quiesced(true);
        } else {
            destroyTimer = EngineTimer.schedule(() -> srq.poller().execute(() -> quiesced(false)),
                    SharedReceives.LAST_WQE_WAIT);
        }
    }

    @Override
    public void lastWorkRequestReached() {
        assert OwnerThread.check(srq.poller());
        lastWqeReached = true;
        if (pendingDestroy != null) {
            quiesced(true);
        }
    }

    private void quiesced(boolean reached) {
        Runnable destroy = pendingDestroy;
        if (destroy == null) {
            return;
        }
        pendingDestroy = null;
        if (destroyTimer != null) {
            destroyTimer.cancel(false);
            destroyTimer = null;
        }
        if (!reached) {
            EngineLog.debug(receive.description() + ": no QP_LAST_WQE_REACHED within " + SharedReceives.LAST_WQE_WAIT
                    + "; destroying its QP after draining the CQ");
        }
        srq.poller().pollUntilEmpty();
        destroy.run();
    }
}
