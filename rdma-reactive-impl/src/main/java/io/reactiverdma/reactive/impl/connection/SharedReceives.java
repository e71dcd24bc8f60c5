package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PeerProtocolException;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.device.SharedReceiveQueueOwner;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.WcStatus;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * One server's shared receive queue on one device: its buffers, its completion queue and poller (every
 * connection receiving from it is on that CQ, so the SRQ's state, like a connection's, belongs to one thread
 * and takes no lock), the {@link CreditAllotment} of its receives to the connections, and the dispatch of its
 * receive completions, which name the SRQ's {@code wr_id} and the consuming QP's number, to the connection
 * owning that QP.
 *
 * <p>Released buffers are posted again in chains (once an eighth of the depth, at most 256, is free), at
 * once when a connection waits for credits, and when the SRQ runs low ({@code SRQ_LIMIT_REACHED}, armed at a
 * quarter of its depth). Created on the rdma_cm thread; everything else runs on the poller thread.
 */
public final class SharedReceives implements CompletionTarget, SharedReceiveQueueOwner {
    /**
     * How long a closing connection's QP waits for QP_LAST_WQE_REACHED before it is destroyed anyway (a device
     * that does not report it; an event lost).
     */
    static final Duration LAST_WQE_WAIT = Duration.ofSeconds(2);
    /** The most receives posted in one chain. */
    private static final int CHAIN = 256;

    private final DeviceResources device;
    private final String description;
    /** The CQ (and poller) of the SRQ and of every connection using it. */
    final CompletionQueueHandle cq;
    final SharedReceiveQueue srq;
    private final EngineMetrics metrics;
    private final int depth;
    private final int bufferSize;
    private final EngineBuffer[] buffers;
    private final ReceiveRing ring;
    private final CreditAllotment allotment;
    private final QueuePairTable<Member> members = new QueuePairTable<>();
    private final int repostBatch;
    private final int limit;
    /** Members waiting until a posted receive can be kept for their peer's hello, in order. */
    private final java.util.ArrayDeque<Member> helloWaiters = new java.util.ArrayDeque<>();
    private boolean refilling;
    private boolean closed;
    /** SRQ_ERR was reported: nothing is posted any more, and no connection may join (volatile: rdma_cm reads it). */
    private volatile boolean broken;

    /** One connection's membership: its share of the SRQ and its receive queue. Poller thread. */
    final class Member extends CreditAllotment.Share {
        final int qpNum;
        private final QueuePair qp;
        final ReceiveQueue receive;
        private final Consumer<Throwable> fail;
        /** How long a kept receive waits for the peer's hello before the connection is closed. */
        private final Duration helloDeadline;
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

        Member(QueuePair qp, ReceiveQueue receive, Consumer<Throwable> fail, Duration helloDeadline) {
            this.qpNum = qp.qpNum();
            this.qp = qp;
            this.receive = receive;
            this.fail = fail;
            this.helloDeadline = helloDeadline;
        }

        /**
         * Allots credits for the demand {@code flow} does not cover yet; waits its turn for the rest. Returns
         * the credits allotted now.
         */
        int post(FlowControl flow, int undelivered) {
            int n = flow.receivesToPost(allotment.available(this), undelivered);
            if (n > 0) {
                allotment.grant(this, n);
                flow.receivesPosted(n);
            }
            if (!left && flow.receivesToPost(Integer.MAX_VALUE, undelivered) > 0) {
                allotment.await(this);
                refill(); // free buffers not posted yet are credits to give now
            }
            return n;
        }

        /**
         * Its peer will send a hello: a posted receive is kept for it, and {@code kept} runs once one is
         * (at once, or when a refill posts one). Poller thread.
         */
        void expectHello(Runnable kept) {
            if (helloExpected) {
                return;
            }
            helloExpected = true;
            allotment.reserveHello();
            if (helloWaiters.isEmpty() && allotment.backHello()) {
                backed(kept);
            } else {
                helloKept = kept;
                helloWaiters.add(this);
            }
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
         * load the accept may wait its turn on the rdma_cm thread.) Poller thread.
         */
        void established() {
            if (helloExpected && helloTimer == null) {
                helloTimer = EngineTimer.schedule(() -> cq.poller.execute(this::helloTimedOut), helloDeadline);
            }
        }

        private void helloTimedOut() {
            if (helloExpected && helloBacked && !left) {
                PeerProtocolException e = new PeerProtocolException(receive.description() + ": the peer sent no hello "
                        + "within " + helloDeadline + " (ACCEPT_TIMEOUT) of ESTABLISHED; closed so that the receive kept "
                        + "for it on the " + description + " serves another", PeerProtocolException.Violation.HELLO_TIMEOUT);
                EngineLog.warn(e.getMessage());
                fail.accept(e);
            }
        }

        /** The hello arrived, or (the connection left first) will not be counted. */
        void helloDone(boolean arrived) {
            if (helloExpected) {
                helloExpected = false;
                helloKept = null;
                helloWaiters.remove(this);
                allotment.helloDone(helloBacked, arrived);
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
         * so that it takes no more of them, and the connection closes. Poller thread.
         */
        private void sentWithoutCredit() {
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
                    + "without a credit (it overran its share of the " + description + "); not delivered",
                    PeerProtocolException.Violation.SENT_WITHOUT_CREDIT);
            EngineLog.warn(e.getMessage());
            fail.accept(e);
        }

        /**
         * Runs {@code destroy} once the QP (in ERR) may be destroyed: after QP_LAST_WQE_REACHED (or
         * {@link #LAST_WQE_WAIT} without it) and a poll that empties the CQ, so every receive it consumed
         * is handled first (the IB spec's order for a QP on an SRQ; mlx providers drop a destroyed QP's
         * unpolled completions, and their SRQ receives would be lost). Poller thread.
         */
        void beforeDestroy(Runnable destroy) {
            pendingDestroy = destroy;
            if (lastWqeReached) {
                quiesced(true);
            } else {
                destroyTimer = EngineTimer.schedule(() -> cq.poller.execute(() -> quiesced(false)), LAST_WQE_WAIT);
            }
        }

        void lastWorkRequestReached() {
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
                EngineLog.debug(receive.description() + ": no QP_LAST_WQE_REACHED within " + LAST_WQE_WAIT
                        + "; destroying its QP after draining the CQ");
            }
            cq.poller.pollUntilEmpty();
            destroy.run();
        }

        /** A message of this connection's was released: its buffer goes back to the SRQ. */
        void released(int index, int generation) {
            SharedReceives.this.released(this, index, generation);
        }

        /** The connection is gone (its QP destroyed): its credits go back after the completions already queued. */
        void leave() {
            cq.poller.execute(() -> {
                helloDone(false);
                allotment.leave(this);
                members.remove(qpNum, this);
                refill();
            });
        }

        SharedReceives owner() {
            return SharedReceives.this;
        }
    }

    private SharedReceives(DeviceResources device, RdmaTransportConfig config, EngineMetrics metrics) {
        this.device = device;
        this.metrics = metrics;
        this.depth = config.option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH);
        this.bufferSize = config.option(RdmaOption.RECEIVE_BUFFER_SIZE);
        this.description = "shared receive queue of " + depth + " x " + bufferSize + " bytes on "
                + device.context().name();
        int maxSrqWr = device.context().maxSrqWr();
        if (depth > maxSrqWr) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "SHARED_RECEIVE_QUEUE_DEPTH " + depth + " exceeds the device's max_srq_wr (" + maxSrqWr + ") on "
                            + device.context().name());
        }
        this.repostBatch = Math.max(1, Math.min(CHAIN, depth / 8));
        this.limit = Math.max(1, depth / 4);
        this.allotment = new CreditAllotment(depth, config.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        this.buffers = new EngineBuffer[depth];
        // Room for the SRQ's receives and for the sends of many connections (each reserves its own).
        this.cq = device.dedicatedCq(config, depth + (1 << 15), metrics);
        SharedReceiveQueue q = null;
        boolean reserved = false;
        try {
            reserved = cq.tryReserve(depth);
            if (!reserved) {
                throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                        "SHARED_RECEIVE_QUEUE_DEPTH " + depth + " exceeds the device's max_cqe on " + device.context().name());
            }
            q = device.pd.createSharedReceiveQueue(depth);
            for (int i = 0; i < depth; i++) {
                buffers[i] = device.pool.allocatePooled(bufferSize);
            }
        } catch (RuntimeException e) {
            for (EngineBuffer b : buffers) {
                if (b != null) {
                    b.release();
                }
            }
            if (q != null) {
                q.close();
            }
            device.releaseCq(cq, reserved ? depth : 0); // stops its poller: nothing else reserved it
            throw e;
        }
        this.srq = q;
        this.ring = new ReceiveRing(description, buffers, bufferSize, CHAIN, cq.pending, this, q::postReceive);
        metrics.receiveMemory((long) depth * bufferSize);
        device.register(srq, this);
    }

    /**
     * A new SRQ on {@code device} sized by {@code config}'s {@link RdmaOption#SHARED_RECEIVE_QUEUE_DEPTH},
     * its buffers posted (on its poller) and its limit armed. rdma_cm thread.
     */
    public static SharedReceives create(DeviceResources device, RdmaTransportConfig config) {
        SharedReceives s = new SharedReceives(device, config, EngineMetrics.of(config, device.context().name(), null));
        s.cq.poller.execute(() -> {
            s.refill();
            s.arm();
        });
        return s;
    }

    CompletionPoller poller() {
        return cq.poller;
    }

    /** Whether the device reported this SRQ broken ({@code SRQ_ERR}): a server replaces it. Any thread. */
    public boolean isBroken() {
        return broken;
    }

    /**
     * Makes {@code receive} (of {@code qp}) receive from this SRQ; {@code fail} closes its connection, and
     * {@code helloDeadline} bounds the wait for its peer's hello once a receive is kept for it. rdma_cm thread.
     */
    Member join(QueuePair qp, ReceiveQueue receive, Consumer<Throwable> fail, Duration helloDeadline) {
        Member m = new Member(qp, receive, fail, helloDeadline);
        cq.poller.run(() -> {
            Member old = members.get(m.qpNum);
            if (old != null) {
                // A reused QP number while the connection that had it has not left yet: completions of its
                // destroyed QP may still be in the CQ, and they would be this connection's messages. Refused.
                m.left = true;
                fail.accept(new RdmaException(receive.description() + ": QP number " + m.qpNum + " is still used "
                        + "on the " + description + " by a connection that has not left yet"));
                return;
            }
            members.put(m.qpNum, m);
        });
        return m;
    }

    // ------------------------------------------------------------------------------------- completions
    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        onCompletion(p, -1, status, opcode, vendorErr, byteLen, imm, wcFlags);
    }

    /** Poller thread: a receive of the SRQ completed on the QP {@code qpNum}. */
    @Override
    public void onCompletion(PendingOperation p, int qpNum, int status, int opcode, int vendorErr, int byteLen,
            int imm, int wcFlags) {
        int index = p.receiveIndex;
        long latencyNs = System.nanoTime() - p.postedNs;
        cq.pending.free(p);
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        metrics.outstanding(-1);
        metrics.completed(OperationType.RECEIVE, success, flushed, latencyNs, success ? byteLen : 0);
        Member m = members.get(qpNum);
        if (m == null || flushed) {
            allotment.consumedByNobody(); // a QP already gone, or the SRQ flushed: the buffer is free
            ring.free(index);
            maybeRefill();
            return;
        }
        if (success && m.receive.takePeerHello()) {
            // The peer's hello (CreditWordHandshake): sent before any credit, it took the receive kept for it
            // (Member.expectHello); the buffer is free again at once.
            m.helloDone(true);
            ring.free(index);
            maybeRefill();
            return;
        }
        boolean credited = allotment.consumed(m);
        if (!credited && success && m.receive.creditsAgreed()) {
            // Not delivered: it took a receive promised to another connection, whose buffer goes back now.
            released(m, index, ring.generation(index));
            m.sentWithoutCredit();
            return;
        }
        if (!success) {
            released(m, index, ring.generation(index));
            metrics.completionError(WcStatus.of(status).name());
            m.fail.accept(new RdmaCompletionException(OperationType.RECEIVE, status, WcStatus.of(status).name(),
                    vendorErr, m.receive.description()));
            return;
        }
        if (m.receive.isFinished()) {
            released(m, index, ring.generation(index)); // nobody can take it any more
            return;
        }
        m.receive.sharedArrived(buffers[index], index, ring.generation(index), opcode, byteLen, imm, wcFlags);
    }

    @Override
    public void completionHandlingFailed(PendingOperation p, long wrId, Throwable error) {
        EngineLog.error(description + ": handling a receive completion failed", error);
        cq.pending.freeIfCurrent(p, wrId);
    }

    // ------------------------------------------------------------------------------------------ buffers
    private void released(Member m, int index, int generation) {
        allotment.released(m);
        if (closed) {
            ring.retire(index, generation);
            metrics.receiveMemory(-bufferSize);
            return;
        }
        ring.giveBack(index, generation);
        maybeRefill();
    }

    private void maybeRefill() {
        if (ring.freeCount() >= repostBatch || allotment.hasWaiters() || !helloWaiters.isEmpty()) {
            refill();
        }
    }

    /** Posts the free buffers, then gives the waiting connections their credits in turn. */
    private void refill() {
        if (refilling || closed) {
            return;
        }
        refilling = true;
        try {
            repostFree();
            serveHelloWaiters();
            serveWaiters();
        } finally {
            refilling = false;
        }
    }

    private void repostFree() {
        int accepted = ring.post(ring.freeCount());
        allotment.reposted(accepted);
        metrics.outstanding(accepted);
        RuntimeException failure = ring.refusal();
        if (failure != null) {
            EngineLog.error(description + ": ibv_post_srq_recv failed", failure);
        }
    }

    /** Keeps posted receives for the hellos that wait for one, in order, as far as the refill allows. */
    private void serveHelloWaiters() {
        while (!helloWaiters.isEmpty() && allotment.backHello()) {
            Member m = helloWaiters.poll();
            Runnable kept = m.helloKept;
            m.helloKept = null;
            m.backed(kept != null ? kept : () -> { });
        }
    }

    /** Each connection waiting when this starts gets one turn at most (a waiter at its share waits again). */
    private void serveWaiters() {
        int turns = allotment.waiting();
        while (turns-- > 0 && allotment.unallotted() > 0) {
            CreditAllotment.Share s = allotment.nextWaiter();
            if (s == null) {
                break;
            }
            try {
                ((Member) s).receive.creditsAvailable();
            } finally {
                allotment.endTurn();
            }
        }
    }

    private void arm() {
        if (closed) {
            return;
        }
        try {
            srq.armLimit(limit);
        } catch (RuntimeException e) {
            EngineLog.warn(description + ": arming its limit failed (" + e + "); it is refilled on release only");
        }
    }

    /** Async-event thread: the SRQ ran low; post what is free and arm the limit again. */
    @Override
    public void limitReached() {
        cq.poller.execute(() -> {
            refill();
            arm();
        });
    }

    /** Async-event thread: the SRQ broke; every connection on it closes. */
    @Override
    public void failed(AsyncEventType type) {
        cq.poller.execute(() -> {
            RdmaException e = new RdmaException(description + ": the device reported " + type.describe()
                    + " (async event " + type + ")");
            EngineLog.error(e.getMessage(), e);
            closed = true; // nothing is posted any more
            broken = true;
            forEachMember(m -> m.fail.accept(e));
        });
    }

    private void forEachMember(Consumer<Member> action) {
        java.util.List<Member> all = new java.util.ArrayList<>(members.size());
        members.forEach(all::add);
        all.forEach(action);
    }

    /**
     * Destroys the SRQ once every QP using it is destroyed (its server's connections all closed), then gives
     * back its buffers (those held by messages when these are released) and its CQ; then runs {@code done}.
     * Any thread.
     */
    public void close(Runnable done) {
        cq.poller.execute(() -> {
            try {
                closeNow();
            } finally {
                done.run();
            }
        });
    }

    private void closeNow() {
        closed = true;
        device.unregister(srq);
        try {
            srq.close();
        } catch (RuntimeException e) {
            EngineLog.error(description + ": ibv_destroy_srq failed", e);
        }
        int givenBack = 0;
        for (PendingOperation p : cq.pending.snapshotInUse()) {
            if (p.connection == this) {
                buffers[p.receiveIndex].release();
                cq.pending.free(p);
                givenBack++;
            }
        }
        metrics.outstanding(-givenBack);
        givenBack += ring.releaseFree();
        metrics.receiveMemory(-(long) givenBack * bufferSize);
        device.releaseCq(cq, depth);
    }

    /** For tests (poller thread). */
    CreditAllotment allotment() {
        return allotment;
    }

    int depth() {
        return depth;
    }

    @Override
    public String toString() {
        return description;
    }
}
