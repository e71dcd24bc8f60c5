package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
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
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.WcStatus;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * One server's shared receive queue on one device: its buffers, its completion queue and poller (every
 * connection receiving from it is on that CQ, so the SRQ's state, like a connection's, belongs to one thread
 * and takes no lock), the {@link CreditAllotment} of its receives to the connections, and the dispatch of its
 * receive completions, which name the SRQ's {@code wr_id} and the consuming QP's number, to the connection
 * owning that QP.
 *
 * <p>Released buffers are posted again by its {@link SharedReceiveRefill}, also when the SRQ runs low
 * ({@code SRQ_LIMIT_REACHED}, armed at a quarter of its depth); each connection's share is a
 * {@link SharedReceiveMember}. Created on the rdma_cm thread; everything else runs on the poller thread
 * (asserted: {@link OwnerThread}).
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
    private final QueuePairTable<SharedReceiveMember> members = new QueuePairTable<>();
    private final int limit;
    private final SharedReceiveRefill refill;
    private boolean closed;
    /** More connections than {@link CreditAllotment#firstsGuaranteed} joined once: said once. */
    private boolean warnedOversubscribed;
    /** SRQ_ERR was reported: nothing is posted any more, and no connection may join (volatile: rdma_cm reads it). */
    private volatile boolean broken;

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
        this.refill = new SharedReceiveRefill(description, cq.poller, ring, allotment, metrics,
                Math.max(1, Math.min(CHAIN, depth / 8)));
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
     * Makes {@code m}'s connection (named {@code connection}) receive from this SRQ: a reused QP number whose
     * previous connection has not left yet is refused (its {@code fail} runs). rdma_cm thread.
     */
    void join(SharedReceiveMember m, String connection) {
        cq.poller.run(() -> {
            SharedReceiveMember old = members.get(m.qpNum);
            if (old != null) {
                // A reused QP number while the connection that had it has not left yet: completions of its
                // destroyed QP may still be in the CQ, and they would be this connection's messages. Refused.
                m.left = true;
                m.fail.accept(new RdmaException(connection + ": QP number " + m.qpNum + " is still used "
                        + "on the " + description + " by a connection that has not left yet"));
                return;
            }
            members.put(m.qpNum, m);
            if (members.size() > allotment.firstsGuaranteed() && !warnedOversubscribed) {
                warnedOversubscribed = true;
                EngineLog.warn(description + ": " + members.size() + " connections share it, more than half its depth; "
                        + "a connection may now wait for its first credit while peers that sit idle hold theirs "
                        + "(SHARED_RECEIVE_QUEUE_DEPTH of at least twice the connections avoids it; docs/server-guide.md)");
            }
        });
    }

    /** See {@link SharedReceiveRefill#keepReceiveForHello}. Poller thread. */
    boolean keepReceiveForHello(SharedReceiveMember m) {
        return refill.keepReceiveForHello(m);
    }

    void noLongerWaitingForHello(SharedReceiveMember m) {
        refill.noLongerWaitingForHello(m);
    }

    /** {@code m}'s connection is gone (its QP destroyed): its credits go back after the completions already queued. */
    void leave(SharedReceiveMember m) {
        cq.poller.execute(() -> {
            m.helloDone(false);
            allotment.leave(m);
            members.remove(m.qpNum, m);
            refill();
        });
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
        assert OwnerThread.check(cq.poller);
        int index = p.receiveIndex;
        long latencyNs = System.nanoTime() - p.postedNs;
        cq.pending.free(p);
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        metrics.outstanding(-1);
        metrics.completed(OperationType.RECEIVE, success, flushed, latencyNs, success ? byteLen : 0);
        SharedReceiveMember m = members.get(qpNum);
        if (m == null || flushed) {
            allotment.consumedByNobody(); // a QP already gone, or the SRQ flushed: the buffer is free
            ring.free(index);
            maybeRefill();
            return;
        }
        if (success && m.takePeerHello()) {
            // The peer's hello (CreditWordHandshake): sent before any credit, it took the receive kept for it
            // (SharedReceiveMember.expectPeerHello); the buffer is free again at once.
            m.helloDone(true);
            ring.free(index);
            maybeRefill();
            return;
        }
        boolean credited = allotment.consumed(m);
        if (!credited && success && m.receive().creditsAgreed()) {
            // Not delivered: it took a receive promised to another connection, whose buffer goes back now.
            released(m, index, ring.generation(index));
            m.sentWithoutCredit();
            return;
        }
        if (!success) {
            released(m, index, ring.generation(index));
            metrics.completionError(WcStatus.of(status).name());
            m.fail.accept(new RdmaCompletionException(OperationType.RECEIVE, status, WcStatus.of(status).name(),
                    vendorErr, m.receive().description()));
            return;
        }
        if (m.receive().isFinished()) {
            released(m, index, ring.generation(index)); // nobody can take it any more
            return;
        }
        m.receive().arrived(buffers[index], index, ring.generation(index), opcode, byteLen, imm, wcFlags);
    }

    @Override
    public void completionHandlingFailed(PendingOperation p, long wrId, Throwable error) {
        EngineLog.error(description + ": handling a receive completion failed", error);
        cq.pending.freeIfCurrent(p, wrId);
    }

    // ------------------------------------------------------------------------------------------ buffers
    /** A message of {@code m}'s was released: its buffer goes back to the SRQ. Poller thread. */
    void released(SharedReceiveMember m, int index, int generation) {
        assert OwnerThread.check(cq.poller);
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
        if (!closed) {
            refill.maybeRefill();
        }
    }

    /** Posts the free buffers, then gives the waiting connections their credits in turn. Poller thread. */
    void refill() {
        assert OwnerThread.check(cq.poller);
        if (!closed) {
            refill.refill();
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

    private void forEachMember(Consumer<SharedReceiveMember> action) {
        List<SharedReceiveMember> all = new ArrayList<>(members.size());
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
