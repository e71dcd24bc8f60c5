package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Faults injected into one loopback stack, on command from tests. Thread-safe; every fault is one-shot (or
 * counted) unless it says otherwise. {@link #clear()} removes the pending ones.
 */
public final class LoopbackFaults {
    /** Which post a {@link #refuseNextPost} fault refuses. */
    public enum Post { SEND, RECEIVE }

    record PostRefusal(Post kind, QueuePair qp, int index, int errno) {
    }

    record ConnectFailure(CmEventType type, int status) {
    }

    private static final class CqFault {
        CompletionQueue cq;
        final LoopbackCompletionQueue.Call call;
        int times;
        final Throwable error;

        CqFault(CompletionQueue cq, LoopbackCompletionQueue.Call call, int times, Throwable error) {
            this.cq = cq;
            this.call = call;
            this.times = times;
            this.error = error;
        }
    }

    private record CompletionFault(QueuePair qp, WrOpcode opcode, WcStatus status) {
    }

    private static final class Delay {
        final CmEventType type;
        final long nanos;
        int times;

        Delay(CmEventType type, long nanos, int times) {
            this.type = type;
            this.nanos = nanos;
            this.times = times;
        }
    }

    private final LoopbackStack stack;
    private final List<CqFault> cqFaults = new ArrayList<>();
    private final List<PostRefusal> postRefusals = new ArrayList<>();
    private final List<CompletionFault> completionFaults = new ArrayList<>();
    private final List<ConnectFailure> connectFailures = new ArrayList<>();
    private final List<Delay> delays = new ArrayList<>();
    private final List<CqStall> stalls = new ArrayList<>();

    LoopbackFaults(LoopbackStack stack) {
        this.stack = stack;
    }

    // ------------------------------------------------------------------------------ completion queues
    /**
     * The next {@code times} calls of kind {@code call} (-1: every call from now on) on {@code cq} throw
     * {@code error}; with {@code cq} null, on the next CQ created.
     */
    public synchronized void failCqCalls(CompletionQueue cq, LoopbackCompletionQueue.Call call, int times,
            Throwable error) {
        cqFaults.add(new CqFault(cq, call, times, error));
    }

    /**
     * A poller thread the operating system does not run for a while, as on a loaded machine: once
     * {@link CqStall#engage() engaged}, the next {@code ibv_get_cq_event} on the next CQ created blocks, deaf to
     * wake-ups and completion events, until {@link CqStall#release() released}. Work handed to its poller and
     * completions that reach its CQ meanwhile are then found in whatever order the late thread looks first.
     */
    public synchronized CqStall stallNextCq() {
        CqStall s = new CqStall();
        stalls.add(s);
        return s;
    }

    /** One {@link #stallNextCq()}. */
    public static final class CqStall {
        private CompletionQueue cq;
        private volatile boolean engaged;
        private final CountDownLatch stalled = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        private CqStall() {
        }

        /** The CQ's next await stalls (one already under way is not touched). */
        public void engage() {
            engaged = true;
        }

        /** Waits until the poller is stalled; false if it did not stall within {@code timeout}. */
        public boolean awaitStalled(Duration timeout) throws InterruptedException {
            return stalled.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }

        /** The stalled await goes on (or none stalls any more). */
        public void release() {
            engaged = false;
            released.countDown();
        }
    }

    synchronized void cqCreated(LoopbackCompletionQueue q) {
        for (CqStall s : stalls) {
            if (s.cq == null) {
                s.cq = q;
                break;
            }
        }
        for (CqFault f : cqFaults) {
            if (f.cq == null) {
                f.cq = q;
                return;
            }
        }
    }

    void cqCall(LoopbackCompletionQueue q, LoopbackCompletionQueue.Call kind) {
        if (kind == LoopbackCompletionQueue.Call.AWAIT) {
            stallIfEngaged(q);
        }
        Throwable t = null;
        synchronized (this) {
            for (Iterator<CqFault> it = cqFaults.iterator(); it.hasNext(); ) {
                CqFault f = it.next();
                if (f.cq == q && (f.call == kind || f.call == LoopbackCompletionQueue.Call.ANY)) {
                    if (f.times > 0 && --f.times == 0) {
                        it.remove();
                    }
                    t = f.error;
                    break;
                }
            }
        }
        if (t != null) {
            throw Errnos.sneaky(t);
        }
    }

    private void stallIfEngaged(LoopbackCompletionQueue q) {
        CqStall stall = null;
        synchronized (this) {
            for (Iterator<CqStall> it = stalls.iterator(); it.hasNext(); ) {
                CqStall s = it.next();
                if (s.cq == q && s.engaged) {
                    it.remove();
                    stall = s;
                    break;
                }
            }
        }
        if (stall != null) {
            stall.stalled.countDown();
            try {
                stall.released.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ------------------------------------------------------------------------------------------ posts
    /**
     * The next post of {@code kind} (on {@code qp}, or on any QP when null) whose chain has more than
     * {@code index} requests is refused at {@code index} with {@code errno}: the requests before it are
     * posted and complete. An {@code index} of -1 (sends only) is rxe's failed doorbell: the whole chain is
     * queued and will complete, yet the post fails without setting {@code bad_wr}, which the verbs adapter
     * maps through {@code PostRefusedException.firstNotPosted}.
     */
    public synchronized void refuseNextPost(Post kind, QueuePair qp, int index, int errno) {
        postRefusals.add(new PostRefusal(kind, qp, index, errno));
    }

    synchronized PostRefusal takePostRefusal(boolean send, QueuePair qp, int count) {
        for (Iterator<PostRefusal> it = postRefusals.iterator(); it.hasNext(); ) {
            PostRefusal p = it.next();
            if ((p.kind() == Post.SEND) == send && (p.qp() == null || p.qp() == qp) && p.index() < count) {
                it.remove();
                return p;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------ completions
    /**
     * The next send work request executed (on {@code qp} or any when null, of {@code opcode} or any when
     * null) moves no data and completes with {@code status}; its QP goes to ERR like on hardware.
     */
    public synchronized void failNextCompletion(QueuePair qp, WrOpcode opcode, WcStatus status) {
        completionFaults.add(new CompletionFault(qp, opcode, status));
    }

    synchronized WcStatus takeCompletionFault(QueuePair qp, WrOpcode opcode) {
        for (Iterator<CompletionFault> it = completionFaults.iterator(); it.hasNext(); ) {
            CompletionFault f = it.next();
            if ((f.qp() == null || f.qp() == qp) && (f.opcode() == null || f.opcode() == opcode)) {
                it.remove();
                return f.status();
            }
        }
        return null;
    }

    /** Stops completion generation on {@code device}'s CQs (work still executes; completions are held). */
    public void hang(Device device) {
        ((LoopbackDevice) device).setHung(true);
    }

    /** Ends {@link #hang}: the held completions arrive, in order. */
    public void resume(Device device) {
        ((LoopbackDevice) device).setHung(false);
    }

    // ----------------------------------------------------------------------------------- async events
    /** A QP async event (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR move the QP to ERR as hardware does). */
    public void raiseQpEvent(QueuePair qp, AsyncEventType type) {
        LoopbackQueuePair q = (LoopbackQueuePair) qp;
        if (type == AsyncEventType.QP_FATAL || type == AsyncEventType.QP_REQ_ERR
                || type == AsyncEventType.QP_ACCESS_ERR) {
            synchronized (stack.lock) {
                q.enterError();
            }
        }
        q.pd.device.raise(new AsyncEventInfo(type, -1, q.qpNum(), null));
    }

    /** An SRQ async event ({@code SRQ_ERR}, {@code SRQ_LIMIT_REACHED}) for {@code srq}. */
    public void raiseSrqEvent(io.reactiverdma.reactive.impl.verbs.SharedReceiveQueue srq, AsyncEventType type) {
        LoopbackSharedReceiveQueue q = (LoopbackSharedReceiveQueue) srq;
        q.pd.device.raise(new AsyncEventInfo(type, -1, -1, null, q));
    }

    /**
     * The next QPs created get these numbers, in order, even one a live QP has: a device never does that, but
     * it models the window in which rxe, which hands QP numbers out cyclically, reuses a destroyed QP's number
     * while the engine still has that QP's completions to handle.
     */
    public void nextQpNumbers(int... numbers) {
        synchronized (stack.givenQpNums) {
            for (int n : numbers) {
                stack.givenQpNums.add(n);
            }
        }
    }

    /** CQ_ERR for {@code cq}. */
    public void raiseCqEvent(CompletionQueue cq) {
        LoopbackCompletionQueue q = (LoopbackCompletionQueue) cq;
        q.device.raise(new AsyncEventInfo(AsyncEventType.CQ_ERR, -1, -1, q));
    }

    /** A port event (PORT_ERR, PORT_ACTIVE, GID_CHANGE, ...) on {@code port} of {@code device}. */
    public void raisePortEvent(Device device, AsyncEventType type, int port) {
        ((LoopbackDevice) device).raise(new AsyncEventInfo(type, port, -1, null));
    }

    /** DEVICE_FATAL on {@code device}. */
    public void raiseDeviceFatal(Device device) {
        ((LoopbackDevice) device).raise(new AsyncEventInfo(AsyncEventType.DEVICE_FATAL, -1, -1, null));
    }

    // ---------------------------------------------------------------------------------------- rdma_cm
    /**
     * The next connect attempt fails at the step {@code type} belongs to: ADDR_ERROR at rdma_resolve_addr,
     * ROUTE_ERROR at rdma_resolve_route, REJECTED / UNREACHABLE / CONNECT_ERROR at rdma_connect; the event
     * carries {@code status}.
     */
    public synchronized void failNextConnect(CmEventType type, int status) {
        if (type != CmEventType.ADDR_ERROR && type != CmEventType.ROUTE_ERROR && type != CmEventType.REJECTED
                && type != CmEventType.UNREACHABLE && type != CmEventType.CONNECT_ERROR) {
            throw new IllegalArgumentException(type + " is no connect failure");
        }
        connectFailures.add(new ConnectFailure(type, status));
    }

    /** Fabric lock held. {@code step}: ADDR_ERROR, ROUTE_ERROR, or CONNECT_REQUEST for rdma_connect. */
    synchronized ConnectFailure takeConnectFailure(CmEventType step) {
        for (Iterator<ConnectFailure> it = connectFailures.iterator(); it.hasNext(); ) {
            ConnectFailure f = it.next();
            CmEventType at = f.type() == CmEventType.ADDR_ERROR || f.type() == CmEventType.ROUTE_ERROR
                    ? f.type() : CmEventType.CONNECT_REQUEST;
            if (at == step) {
                it.remove();
                return f;
            }
        }
        return null;
    }

    /** The next {@code times} events of {@code type} (-1: all) are delivered {@code delay} late. */
    public synchronized void delayEvents(CmEventType type, Duration delay, int times) {
        delays.add(new Delay(type, delay.toNanos(), times));
    }

    synchronized long takeEventDelay(CmEventType type) {
        for (Iterator<Delay> it = delays.iterator(); it.hasNext(); ) {
            Delay d = it.next();
            if (d.type == type) {
                if (d.times > 0 && --d.times == 0) {
                    it.remove();
                }
                return d.nanos;
            }
        }
        return 0;
    }

    /**
     * The connection of {@code id} breaks as if its peer disconnected: both QPs go to ERR and both ids get
     * DISCONNECTED (a connected id; otherwise nothing happens).
     */
    public void disconnect(CmId id) {
        LoopbackCmId i = (LoopbackCmId) id;
        synchronized (stack.lock) {
            if (!i.closed && i.state == LoopbackCmId.State.CONNECTED) {
                LoopbackCmId p = i.peer;
                if (p != null && !p.closed && p.state == LoopbackCmId.State.CONNECTED) {
                    stack.cm.disconnect(p, true);
                } else {
                    stack.cm.disconnect(i, true);
                }
            }
        }
    }

    /** {@link #disconnect} for every connected id on {@code device}. */
    public void disconnectAll(Device device) {
        synchronized (stack.lock) {
            for (LoopbackCmId i : stack.cm.ids) {
                if (i.device == device) {
                    disconnect(i);
                }
            }
        }
    }

    /** DEVICE_REMOVAL to {@code id} alone; its QP goes to ERR. */
    public void deviceRemoval(CmId id) {
        LoopbackCmId i = (LoopbackCmId) id;
        synchronized (stack.lock) {
            if (i.qp != null) {
                i.qp.enterError();
            }
            stack.cm.deliver(i, CmEventType.DEVICE_REMOVAL, 0, null, null);
        }
    }

    /** DEVICE_REMOVAL to every live id on {@code device} (listeners bound to its addresses included). */
    public void removeDevice(Device device) {
        synchronized (stack.lock) {
            for (LoopbackCmId i : stack.cm.ids) {
                if (i.device == device && !i.closed) {
                    deviceRemoval(i);
                }
            }
        }
    }

    /**
     * The host of {@code id} dies: no event reaches it or comes from it any more (its peer gets no
     * DISCONNECTED), and its QP executes and answers nothing, so the peer's requests end in RETRY_EXC_ERR
     * after its retry count of (scaled) ACK timeouts.
     */
    public void dropHost(CmId id) {
        LoopbackCmId i = (LoopbackCmId) id;
        synchronized (stack.lock) {
            i.dead = true;
            if (i.qp != null) {
                i.qp.dead = true;
            }
        }
    }

    private int datagramDrops;
    private int joinFailure;

    /** The next {@code n} datagrams (unicast, or a group's copies) are lost on the "wire". */
    public synchronized void dropNextDatagrams(int n) {
        datagramDrops += n;
    }

    synchronized boolean takeDatagramDrop() {
        if (datagramDrops == 0) {
            return false;
        }
        datagramDrops--;
        return true;
    }

    /** The next rdma_join_multicast is answered with MULTICAST_ERROR and {@code status}. */
    public synchronized void failNextJoin(int status) {
        joinFailure = status;
    }

    synchronized int takeJoinFailure() {
        int s = joinFailure;
        joinFailure = 0;
        return s;
    }

    /** Removes every pending fault (not hangs or dead hosts). */
    public synchronized void clear() {
        datagramDrops = 0;
        joinFailure = 0;
        cqFaults.clear();
        postRefusals.clear();
        completionFaults.clear();
        connectFailures.clear();
        delays.clear();
        stalls.forEach(CqStall::release);
        stalls.clear();
    }
}
