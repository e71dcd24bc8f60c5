package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import java.util.ArrayDeque;

/**
 * An RC queue pair, or a UD one ({@link #ud}: see {@link LoopbackDatagrams}). Posting validates and queues (the depth counts work requests posted and not completed);
 * the stack's wire thread executes the send queue once the QP is connected (RTS) and generates every
 * completion. In ERR everything posted, before or after, completes with WR_FLUSH_ERR in order. Destroying it
 * drops what is queued without completions, like ibv_destroy_qp.
 */
public final class LoopbackQueuePair implements QueuePair {
    /** The QP state as the loopback models it (INIT covers RESET..RTR: posts queue, nothing executes). */
    public enum State { INIT, RTS, ERR, DESTROYED }

    record SendWqe(long wrId, WrOpcode opcode, int flags, boolean hasSge, long addr, int length, int lkey,
                   byte[] inline, long remoteAddr, int rkey, long compareAdd, long swap, int imm, long ahKey,
                   int remoteQpn, int remoteQkey, Bind bind) {
        boolean signaled() {
            return (flags & SendFlags.SIGNALED) != 0;
        }
    }

    /** The operands of a BIND_MW work request: window and region by handle, the new rkey, range, access. */
    record Bind(long window, int newRkey, long region, long address, long length, int access) {
        static Bind read(SendWorkRequests c, int i) {
            java.nio.ByteBuffer b = c.buffer();
            int at = (int) (c.address(i) - c.address());
            return new Bind(b.getLong(at + SendWorkRequests.BIND_MW_MW_OFFSET),
                    b.getInt(at + SendWorkRequests.BIND_MW_RKEY_OFFSET), b.getLong(at + SendWorkRequests.BIND_MW_MR_OFFSET),
                    b.getLong(at + SendWorkRequests.BIND_MW_ADDR_OFFSET), b.getLong(at + SendWorkRequests.BIND_MW_LENGTH_OFFSET),
                    b.getInt(at + SendWorkRequests.BIND_MW_ACCESS_FLAGS_OFFSET));
        }
    }

    record RecvWqe(long wrId, boolean hasSge, long addr, int length, int lkey) {
    }

    /** What the loopback grants at most as inline data. */
    public static final int MAX_INLINE = 256;
    /** The largest queue depth accepted. */
    public static final int MAX_WR = 16384;

    final LoopbackStack stack;
    final LoopbackCmId id;
    final LoopbackProtectionDomain pd;
    final LoopbackCompletionQueue cq;
    /** Where its receives come from instead of {@link #rq}, or null. */
    final LoopbackSharedReceiveQueue srq;
    private final int qpNum;
    final int maxSendWr;
    final int maxRecvWr;
    private final int maxInline;
    /** An unreliable-datagram QP (rdma_create_qp on a UDP id): RTS at once, sends go by address handle. */
    boolean ud;
    /** The zero-cost data path of an RC QP on a zero-cost stack, else null (see {@link ZeroCostQueuePair}). */
    final ZeroCostQueuePair zero;
    // ---- fabric lock (written under it; volatile for the zero-cost path, which reads it without)
    volatile State state = State.INIT;
    LoopbackQueuePair peer;
    /** Its host "died" (a fault): it executes nothing and answers nothing. */
    boolean dead;
    int retryCount = 7;
    int rnrRetryCount = 7;
    /**
     * The min_rnr_timer code its RNR NAKs carry: 0 once connected, as rdma_cm's RTR transition leaves it (0 =
     * 655 ms on hardware; here the stack's rnrDelay stands for it), until ibv_modify_qp sets another.
     */
    int minRnrTimer;
    final ArrayDeque<SendWqe> sq = new ArrayDeque<>();
    final ArrayDeque<RecvWqe> rq = new ArrayDeque<>();
    boolean kickScheduled;
    boolean waiting;
    int rnrAttempts;
    int retryAttempts;

    LoopbackQueuePair(LoopbackCmId id, LoopbackProtectionDomain pd, LoopbackCompletionQueue cq, int maxSendWr,
            int maxRecvWr, int maxInline, LoopbackSharedReceiveQueue srq) {
        this.srq = srq;
        this.stack = pd.stack;
        this.id = id;
        this.pd = pd;
        this.cq = cq;
        this.qpNum = stack.nextQpNum();
        this.maxSendWr = maxSendWr;
        this.maxRecvWr = maxRecvWr;
        this.maxInline = maxInline;
        this.zero = stack.zeroCost && srq == null ? new ZeroCostQueuePair(this, maxRecvWr) : null;
    }

    /** Whether posts take the zero-cost path (an RC QP on a zero-cost stack; UD QPs keep the wire). */
    private boolean zeroCost() {
        return zero != null && !ud;
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public int maxInlineData() {
        return maxInline;
    }

    public State state() {
        synchronized (stack.lock) {
            return state;
        }
    }

    /** Send work requests posted and not completed yet. */
    public int outstandingSends() {
        if (zeroCost()) {
            return 0; // executed at post time
        }
        synchronized (stack.lock) {
            return sq.size();
        }
    }

    /** Receives posted and not consumed yet. */
    public int postedReceives() {
        if (zeroCost()) {
            return zero.postedReceives();
        }
        synchronized (stack.lock) {
            return rq.size();
        }
    }

    private static PostRefusedException refused(String call, int errno, int index, String why) {
        return new PostRefusedException(call + " failed: errno " + errno + " at work request " + index + ": " + why,
                errno, index, null);
    }

    /** Counters for tests of doorbell batching and selective signalling (fabric lock). */
    private long sendPostCalls;
    private long receivePostCalls;
    private long sendRequestsPosted;
    long signalledSendCompletions;

    /** {@code ibv_post_send} calls on this QP (refused ones included). */
    public long sendPostCalls() {
        if (zeroCost()) {
            return zero.sendPostCalls;
        }
        synchronized (stack.lock) {
            return sendPostCalls;
        }
    }

    /** {@code ibv_post_recv} calls on this QP (refused ones included). */
    public long receivePostCalls() {
        if (zeroCost()) {
            return zero.receivePostCalls;
        }
        synchronized (stack.lock) {
            return receivePostCalls;
        }
    }

    /** Send work requests the QP took. */
    public long sendRequestsPosted() {
        if (zeroCost()) {
            return zero.sendRequestsPosted;
        }
        synchronized (stack.lock) {
            return sendRequestsPosted;
        }
    }

    /** Successful send-queue requests that gave a completion (signalled ones). */
    public long signalledSendCompletions() {
        if (zeroCost()) {
            return zero.signalledSendCompletions;
        }
        synchronized (stack.lock) {
            return signalledSendCompletions;
        }
    }

    @Override
    public void postSend(SendWorkRequests chain) {
        if (zeroCost()) {
            zero.postSend(chain);
            return;
        }
        int posted = 0;
        synchronized (stack.lock) {
            sendPostCalls++;
            try {
                if (state == State.DESTROYED) {
                    throw refused("ibv_post_send", Errnos.EINVAL, 0, "the QP " + qpNum + " was destroyed");
                }
                LoopbackFaults.PostRefusal f = stack.faults.takePostRefusal(true, this, chain.count());
                for (int i = 0; i < chain.count(); i++) {
                    if (f != null && f.index() == i) {
                        throw refused("ibv_post_send", f.errno(), i, "injected fault");
                    }
                    sq.add(validate(chain, i));
                    pd.device.resources.outstanding(1);
                    posted++;
                    sendRequestsPosted++;
                }
                if (f != null && f.index() < 0) { // as rxe's failed doorbell: all queued, bad_wr not set
                    throw refused("ibv_post_send", f.errno(), PostRefusedException.firstNotPosted(-1, chain.count()),
                            "injected fault after queuing the chain, bad_wr not set");
                }
            } finally {
                if (posted > 0) {
                    afterPost();
                }
            }
        }
    }

    private SendWqe validate(SendWorkRequests c, int i) {
        WrOpcode op = c.opcode(i);
        int flags = c.sendFlags(i);
        if (sq.size() >= maxSendWr && (op == WrOpcode.BIND_MW || op == WrOpcode.LOCAL_INV)) {
            throw refused("ibv_post_send", Errnos.ENOMEM, i, "send queue full (" + maxSendWr + ")");
        }
        if (op == WrOpcode.BIND_MW) {
            return new SendWqe(c.wrId(i), op, flags, false, 0, 0, 0, null, 0, 0, 0, 0, 0, 0, 0, 0, Bind.read(c, i));
        }
        if (op == WrOpcode.LOCAL_INV) {
            int at = (int) (c.address(i) - c.address()); // invalidate_rkey: host order, where imm_data is big-endian
            int rkey = c.buffer().getInt(at + SendWorkRequests.INVALIDATE_RKEY_OFFSET);
            return new SendWqe(c.wrId(i), op, flags, false, 0, 0, 0, null, 0, rkey, 0, 0, 0, 0, 0, 0, null);
        }
        if (ud && op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
            throw refused("ibv_post_send", Errnos.EINVAL, i, "opcode " + op + " not supported on a UD QP");
        }
        if (op == null || !(op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE
                || op == WrOpcode.RDMA_WRITE_WITH_IMM || op == WrOpcode.RDMA_READ
                || op == WrOpcode.ATOMIC_CMP_AND_SWP || op == WrOpcode.ATOMIC_FETCH_AND_ADD)) {
            throw refused("ibv_post_send", Errnos.EINVAL, i, "opcode " + op + " not supported on this RC QP");
        }
        int numSge = c.numSge(i);
        if (numSge < 0 || numSge > 1) {
            throw refused("ibv_post_send", Errnos.EINVAL, i, numSge + " SGEs (max_send_sge 1)");
        }
        if (sq.size() >= maxSendWr) {
            throw refused("ibv_post_send", Errnos.ENOMEM, i, "send queue full (" + maxSendWr + ")");
        }
        boolean hasSge = numSge == 1;
        long addr = hasSge ? c.sgeAddr(i, 0) : 0;
        int len = hasSge ? c.sgeLength(i, 0) : 0;
        int lkey = hasSge ? c.sgeLkey(i, 0) : 0;
        byte[] inline = null;
        if ((flags & SendFlags.INLINE) != 0) {
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM && op != WrOpcode.RDMA_WRITE
                    && op != WrOpcode.RDMA_WRITE_WITH_IMM) {
                throw refused("ibv_post_send", Errnos.EINVAL, i, "INLINE with " + op);
            }
            if (len > maxInline) {
                throw refused("ibv_post_send", Errnos.EINVAL, i, len + " inline bytes (max_inline_data "
                        + maxInline + ")");
            }
            if (len > 0) {
                LoopbackRegistration r = stack.memory.containing(addr, len);
                if (r == null) {
                    throw refused("ibv_post_send", Errnos.EINVAL, i, "inline data at 0x" + Long.toHexString(addr)
                            + "+" + len + " is in no live registration (the loopback cannot read it)");
                }
                inline = r.read(addr, len);
            } else {
                inline = new byte[0];
            }
        }
        boolean atomic = op == WrOpcode.ATOMIC_CMP_AND_SWP || op == WrOpcode.ATOMIC_FETCH_AND_ADD;
        return new SendWqe(c.wrId(i), op, flags, hasSge, addr, len, lkey, inline, c.remoteAddr(i),
                atomic ? c.atomicRkey(i) : c.rkey(i), atomic ? c.compareAdd(i) : 0, atomic ? c.swap(i) : 0,
                op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM ? c.immData(i) : 0,
                ud ? c.udAh(i) : 0, ud ? c.udRemoteQpn(i) : 0, ud ? c.udRemoteQkey(i) : 0, null);
    }

    @Override
    public void postReceive(ReceiveWorkRequests chain) {
        if (zeroCost()) {
            zero.postReceive(chain);
            return;
        }
        int posted = 0;
        synchronized (stack.lock) {
            receivePostCalls++;
            try {
                if (state == State.DESTROYED) {
                    throw refused("ibv_post_recv", Errnos.EINVAL, 0, "the QP " + qpNum + " was destroyed");
                }
                if (srq != null) {
                    throw refused("ibv_post_recv", Errnos.EINVAL, 0, "the QP " + qpNum + " receives from an SRQ");
                }
                LoopbackFaults.PostRefusal f = stack.faults.takePostRefusal(false, this, chain.count());
                for (int i = 0; i < chain.count(); i++) {
                    if (f != null && f.index() == i) {
                        throw refused("ibv_post_recv", f.errno(), i, "injected fault");
                    }
                    int numSge = chain.numSge(i);
                    if (numSge < 0 || numSge > 1) {
                        throw refused("ibv_post_recv", Errnos.EINVAL, i, numSge + " SGEs (max_recv_sge 1)");
                    }
                    if (rq.size() >= maxRecvWr) {
                        throw refused("ibv_post_recv", Errnos.ENOMEM, i, "receive queue full (" + maxRecvWr + ")");
                    }
                    boolean hasSge = numSge == 1;
                    rq.add(new RecvWqe(chain.wrId(i), hasSge, hasSge ? chain.sgeAddr(i, 0) : 0,
                            hasSge ? chain.sgeLength(i, 0) : 0, hasSge ? chain.sgeLkey(i, 0) : 0));
                    pd.device.resources.outstanding(1);
                    posted++;
                }
            } finally {
                if (posted > 0) {
                    afterPost();
                }
            }
        }
    }

    private void afterPost() {
        if (state == State.RTS) {
            stack.wire.kick(this);
        } else if (state == State.ERR) {
            stack.wire.scheduleFlush(this);
        }
    }

    @Override
    public void toError() {
        synchronized (stack.lock) {
            if (state == State.DESTROYED) {
                throw new IllegalStateException("ibv_modify_qp(ERR): the QP " + qpNum + " was destroyed");
            }
            enterError();
        }
    }

    @Override
    public void minRnrTimer(int code) {
        synchronized (stack.lock) {
            if (state != State.RTS) {
                // IBA: min_rnr_timer may change in INIT->RTR, RTR->RTS and RTS->RTS only; rdma_cm does the first two
                throw Errnos.fail("ibv_modify_qp(MIN_RNR_TIMER)", Errnos.EINVAL, "the QP " + qpNum + " is in " + state);
            }
            if (code < 0 || code > 31) {
                throw Errnos.fail("ibv_modify_qp(MIN_RNR_TIMER)", Errnos.EINVAL, "min_rnr_timer " + code);
            }
            minRnrTimer = code;
        }
    }

    /** How often its sends are retried after an RNR NAK: its peer's rnr_retry_count, as rdma_cm sets it (for tests). */
    public int rnrRetryCount() {
        synchronized (stack.lock) {
            return rnrRetryCount;
        }
    }

    /** The min_rnr_timer code its RNR NAKs carry now (for tests). */
    public int minRnrTimer() {
        synchronized (stack.lock) {
            return minRnrTimer;
        }
    }

    /**
     * How long a peer waits after an RNR NAK of this QP: code 0 (rdma_cm's) is the stack's rnrDelay, any other
     * the IBA table's value (12 = 0.64 ms). Fabric lock held.
     */
    long rnrDelayNanos() {
        return minRnrTimer == 0 ? stack.rnrDelay.toNanos() : RNR_TIMER_NANOS[minRnrTimer];
    }

    /** IBA 9.7.5.2.8, table 45: min_rnr_timer codes 1..31 in nanoseconds (code 0, 655.36 ms, see above). */
    private static final long[] RNR_TIMER_NANOS = {0, 10_000, 20_000, 30_000, 40_000, 60_000, 80_000, 120_000,
            160_000, 240_000, 320_000, 480_000, 640_000, 960_000, 1_280_000, 1_920_000, 2_560_000, 3_840_000,
            5_120_000, 7_680_000, 10_240_000, 15_360_000, 20_480_000, 30_720_000, 40_960_000, 61_440_000,
            81_920_000, 122_880_000, 163_840_000, 245_760_000, 327_680_000, 491_520_000};

    /** Whether a receive is ready for an incoming message (fabric lock held). */
    boolean hasReceive() {
        return srq != null ? !srq.queue.isEmpty() : !rq.isEmpty();
    }

    /** Takes the receive an incoming message consumes, or null: RNR (fabric lock held). */
    RecvWqe takeReceive() {
        return srq != null ? srq.take() : rq.poll();
    }

    /** Moves to ERR (unless destroyed) and schedules the flush of everything queued. Fabric lock held. */
    void enterError() {
        if (state == State.INIT || state == State.RTS) {
            state = State.ERR;
            if (srq != null) { // it consumes no more SRQ receives (deliveries are synchronous here)
                pd.device.raise(new io.reactiverdma.reactive.impl.verbs.AsyncEventInfo(
                        io.reactiverdma.verbs.AsyncEventType.QP_LAST_WQE_REACHED, -1, qpNum, null));
            }
        }
        if (state == State.ERR) {
            if (zeroCost()) {
                cq.requestFlush(this); // its receives live on the poller thread: flushed there
            } else {
                stack.wire.scheduleFlush(this);
            }
        }
    }

    /** INIT to RTS once connected to {@code p}. Fabric lock held. */
    void connectTo(LoopbackQueuePair p, int retry, int rnrRetry) {
        peer = p;
        retryCount = retry;
        rnrRetryCount = rnrRetry;
        minRnrTimer = 0; // rdma_cm's RTR transition
        if (state == State.INIT) {
            state = State.RTS;
            stack.wire.kick(this);
        }
    }

    /** ibv_destroy_qp: nothing queued completes, the device touches none of its buffers again. Idempotent. */
    void destroy() {
        synchronized (stack.lock) {
            if (state == State.DESTROYED) {
                return;
            }
            state = State.DESTROYED;
            stack.memory.invalidateWindowsOf(this);
            if (ud) {
                stack.datagrams.unregister(this);
            }
            pd.device.resources.outstanding(-(sq.size() + rq.size()));
            sq.clear();
            rq.clear();
            if (zero != null) {
                zero.clear();
            }
            pd.queuePairs.remove(this);
            cq.queuePairs.remove(this);
            if (stack.cleanCqOnDestroy) {
                cq.clean(qpNum);
            }
        }
        pd.device.resources.remove(LoopbackResources.Kind.QUEUE_PAIR, this);
    }

    @Override
    public String toString() {
        return (ud ? "ud qp " : "qp ") + qpNum + " of " + id.description();
    }
}
