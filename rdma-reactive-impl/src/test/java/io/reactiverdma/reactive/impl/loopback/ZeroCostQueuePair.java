package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair.State;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

/**
 * The data path of an RC queue pair on a zero-cost stack ({@link LoopbackStack.Builder#zeroCost}): a work
 * request executes inside {@code ibv_post_send} on the posting thread. A SEND takes the peer's oldest posted
 * receive, copies its bytes once (registered buffer to registered buffer, nothing for zero bytes) and writes
 * the receive's completion and its own (when signalled) straight into the completion queues' rings
 * ({@link CompletionRing}); a WRITE or READ copies once between the two registrations. No lock, no wire
 * thread, no object per work request: receives wait in preallocated arrays, keys are looked up in an array.
 *
 * <p>That is only safe because one thread does all of it: the posting thread must be the poller of both
 * QPs' completion queues (both connection ends on one poller: one engine, shared completion queues); a post
 * from any other thread is refused with an {@link IllegalStateException}. Receives may be posted by another
 * thread before the connection exists (its establishment orders them before the first send).
 *
 * <p>What it does not model, unlike the ordinary loopback: RNR (a SEND or WRITE with immediate data that
 * finds no receive fails at once with RNR_RETRY_EXC_ERR, no retry, no timer); transport retries (a peer in
 * ERR, destroyed or dead fails the request at once with RETRY_EXC_ERR); send queue depth (nothing stays
 * outstanding, so no ENOMEM); posting before RTS (EINVAL, as rxe, instead of queuing); timing, wire loss and
 * ordering between QPs (everything is synchronous); waiting for a copy in progress when memory is
 * deregistered; post and completion fault injection, hung devices and the resource count of outstanding
 * work requests. It checks what is cheap: opcode, SGE count, inline size, every lkey and rkey with its
 * protection domain, range and access (a window only on the QP it is bound to), and the receive's length.
 */
final class ZeroCostQueuePair {
    private final LoopbackQueuePair qp;
    private final LoopbackMemory memory;
    private final long[] recvWrId;
    private final long[] recvAddr;
    private final int[] recvLength;
    private final int[] recvLkey;
    private int recvHead;
    private int recvCount;
    /** The registration the last inline send read from: inline data needs no lkey, so it is found by address. */
    private LoopbackRegistration inlineSource;
    /** Bytes the request executing now moved (the completion's byte_len). */
    private int byteLen;
    // counters, posting thread
    long sendPostCalls;
    long receivePostCalls;
    long sendRequestsPosted;
    long signalledSendCompletions;

    ZeroCostQueuePair(LoopbackQueuePair qp, int maxRecvWr) {
        this.qp = qp;
        this.memory = qp.stack.memory;
        this.recvWrId = new long[maxRecvWr];
        this.recvAddr = new long[maxRecvWr];
        this.recvLength = new int[maxRecvWr];
        this.recvLkey = new int[maxRecvWr];
    }

    int postedReceives() {
        return recvCount;
    }

    void postReceive(ReceiveWorkRequests chain) {
        receivePostCalls++;
        State s = qp.state;
        if (s == State.DESTROYED) {
            throw refused("ibv_post_recv", Errnos.EINVAL, 0, "the QP " + qp.qpNum() + " was destroyed");
        }
        int n = chain.count();
        for (int i = 0; i < n; i++) {
            int numSge = chain.numSge(i);
            if (numSge < 0 || numSge > 1) {
                throw refused("ibv_post_recv", Errnos.EINVAL, i, numSge + " SGEs (max_recv_sge 1)");
            }
            if (recvCount == recvWrId.length) {
                throw refused("ibv_post_recv", Errnos.ENOMEM, i, "receive queue full (" + recvWrId.length + ")");
            }
            int at = recvHead + recvCount;
            if (at >= recvWrId.length) {
                at -= recvWrId.length;
            }
            recvWrId[at] = chain.wrId(i);
            boolean sge = numSge == 1;
            recvAddr[at] = sge ? chain.sgeAddr(i, 0) : 0;
            recvLength[at] = sge ? chain.sgeLength(i, 0) : 0;
            recvLkey[at] = sge ? chain.sgeLkey(i, 0) : 0;
            recvCount++;
        }
        if (s == State.ERR) {
            flushReceives();
        }
    }

    void postSend(SendWorkRequests chain) {
        sendPostCalls++;
        State s = qp.state;
        if (s == State.DESTROYED) {
            throw refused("ibv_post_send", Errnos.EINVAL, 0, "the QP " + qp.qpNum() + " was destroyed");
        }
        if (s == State.INIT) {
            throw refused("ibv_post_send", Errnos.EINVAL, 0, "the QP " + qp.qpNum()
                    + " is not connected yet (the zero-cost device executes at post time, as rxe it refuses before RTS)");
        }
        checkOwner();
        int n = chain.count();
        for (int i = 0; i < n; i++) {
            WrOpcode op = chain.opcode(i);
            int flags = chain.sendFlags(i);
            validate(chain, i, op, flags);
            sendRequestsPosted++;
            long wrId = chain.wrId(i);
            if (qp.state != State.RTS) {
                push(qp, wrId, WcStatus.WR_FLUSH_ERR, LoopbackWire.sendOpcode(op), 0, 0, 0);
                continue;
            }
            byteLen = 0;
            WcStatus status = execute(chain, i, op, flags);
            if (status != WcStatus.SUCCESS) {
                push(qp, wrId, status, LoopbackWire.sendOpcode(op), 0, 0, 0);
                toError(qp);
            } else if ((flags & SendFlags.SIGNALED) != 0) {
                signalledSendCompletions++;
                push(qp, wrId, WcStatus.SUCCESS, LoopbackWire.sendOpcode(op), byteLen, 0, 0);
            }
        }
    }

    /** Everything this thread touches belongs to it: both ends' completion queues are polled by it. */
    private void checkOwner() {
        Thread t = Thread.currentThread();
        LoopbackQueuePair peer = qp.peer;
        if (qp.cq.owner != t || (peer != null && peer.cq.owner != t)) {
            throw new IllegalStateException("zero-cost loopback: " + qp + " posted on " + t.getName()
                    + ", but its completion queue is polled by " + name(qp.cq.owner) + " and its peer's by "
                    + (peer == null ? "none" : name(peer.cq.owner))
                    + ": both connection ends must be on one poller (one engine, shared completion queues)");
        }
    }

    private static String name(Thread t) {
        return t == null ? "no thread yet" : t.getName();
    }

    private void validate(SendWorkRequests c, int i, WrOpcode op, int flags) {
        if (op == null || !(op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE
                || op == WrOpcode.RDMA_WRITE_WITH_IMM || op == WrOpcode.RDMA_READ || op == WrOpcode.ATOMIC_CMP_AND_SWP
                || op == WrOpcode.ATOMIC_FETCH_AND_ADD || op == WrOpcode.BIND_MW || op == WrOpcode.LOCAL_INV)) {
            throw refused("ibv_post_send", Errnos.EINVAL, i, "opcode " + op + " not supported on this RC QP");
        }
        if (op == WrOpcode.BIND_MW || op == WrOpcode.LOCAL_INV) {
            return;
        }
        int numSge = c.numSge(i);
        if (numSge < 0 || numSge > 1) {
            throw refused("ibv_post_send", Errnos.EINVAL, i, numSge + " SGEs (max_send_sge 1)");
        }
        if ((flags & SendFlags.INLINE) != 0) {
            if (op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM && op != WrOpcode.RDMA_WRITE
                    && op != WrOpcode.RDMA_WRITE_WITH_IMM) {
                throw refused("ibv_post_send", Errnos.EINVAL, i, "INLINE with " + op);
            }
            int len = numSge == 1 ? c.sgeLength(i, 0) : 0;
            if (len > qp.maxInlineData()) {
                throw refused("ibv_post_send", Errnos.EINVAL, i, len + " inline bytes (max_inline_data "
                        + qp.maxInlineData() + ")");
            }
        }
    }

    private WcStatus execute(SendWorkRequests c, int i, WrOpcode op, int flags) {
        switch (op) {
            case BIND_MW:
                return qp.stack.wire.bindNow(qp, LoopbackQueuePair.Bind.read(c, i));
            case LOCAL_INV: {
                int at = (int) (c.address(i) - c.address());
                return qp.stack.wire.invalidateNow(qp, c.buffer().getInt(at + SendWorkRequests.INVALIDATE_RKEY_OFFSET));
            }
            default:
                break;
        }
        LoopbackQueuePair peer = qp.peer;
        if (peer == null || peer.state != State.RTS || peer.dead || peer.zero == null) {
            return WcStatus.RETRY_EXC_ERR; // nothing answers; the zero-cost device does not wait and retry
        }
        int len = c.numSge(i) == 1 ? c.sgeLength(i, 0) : 0;
        long addr = len > 0 ? c.sgeAddr(i, 0) : 0;
        int lkey = len > 0 ? c.sgeLkey(i, 0) : 0;
        switch (op) {
            case SEND:
            case SEND_WITH_IMM:
                return send(c, i, peer, op == WrOpcode.SEND_WITH_IMM, flags, addr, len, lkey);
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                return write(c, i, peer, op == WrOpcode.RDMA_WRITE_WITH_IMM, flags, addr, len, lkey);
            case RDMA_READ:
                return read(c, i, peer, addr, len, lkey);
            default:
                return atomic(c, i, peer, op, addr, len, lkey);
        }
    }

    private WcStatus send(SendWorkRequests c, int i, LoopbackQueuePair peer, boolean imm, int flags, long addr,
            int len, int lkey) {
        LoopbackRegistration source = len > 0 ? source(flags, addr, len, lkey) : null;
        if (len > 0 && source == null) {
            return WcStatus.LOC_PROT_ERR;
        }
        ZeroCostQueuePair to = peer.zero;
        if (to.recvCount == 0) {
            return WcStatus.RNR_RETRY_EXC_ERR;
        }
        int r = to.recvHead;
        long rWrId = to.recvWrId[r];
        long rAddr = to.recvAddr[r];
        int rLength = to.recvLength[r];
        int rLkey = to.recvLkey[r];
        to.takeOldestReceive();
        if (len > rLength) {
            push(peer, rWrId, WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0);
            toError(peer);
            return WcStatus.REM_INV_REQ_ERR;
        }
        if (len > 0) {
            LoopbackRegistration target = memory.byLkeyUnlocked(rLkey);
            if (target == null || target.pd != peer.pd || !target.contains(rAddr, len)
                    || (target.access & AccessFlags.LOCAL_WRITE) == 0) {
                push(peer, rWrId, WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, 0, 0);
                toError(peer);
                return WcStatus.REM_OP_ERR;
            }
            source.copyTo(addr, target, rAddr, len);
        }
        push(peer, rWrId, WcStatus.SUCCESS, WcOpcode.RECV, len, imm ? c.immData(i) : 0, imm ? WcFlags.WITH_IMM : 0);
        byteLen = len;
        return WcStatus.SUCCESS;
    }

    private WcStatus write(SendWorkRequests c, int i, LoopbackQueuePair peer, boolean imm, int flags, long addr,
            int len, int lkey) {
        LoopbackRegistration source = len > 0 ? source(flags, addr, len, lkey) : null;
        if (len > 0 && source == null) {
            return WcStatus.LOC_PROT_ERR;
        }
        ZeroCostQueuePair to = peer.zero;
        if (imm && to.recvCount == 0) {
            return WcStatus.RNR_RETRY_EXC_ERR;
        }
        if (len > 0) { // a zero-length WRITE checks no rkey (IB spec)
            long remote = c.remoteAddr(i);
            LoopbackRegistration target = memory.remoteUnlocked(peer, c.rkey(i), remote, len, AccessFlags.REMOTE_WRITE);
            if (target == null) {
                toError(peer);
                return WcStatus.REM_ACCESS_ERR;
            }
            source.copyTo(addr, target, remote, len);
        }
        if (imm) {
            long rWrId = to.recvWrId[to.recvHead];
            to.takeOldestReceive();
            push(peer, rWrId, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, len, c.immData(i), WcFlags.WITH_IMM);
        }
        byteLen = len;
        return WcStatus.SUCCESS;
    }

    private WcStatus read(SendWorkRequests c, int i, LoopbackQueuePair peer, long addr, int len, int lkey) {
        if (len > 0) {
            LoopbackRegistration local = memory.byLkeyUnlocked(lkey);
            if (local == null || local.pd != qp.pd || !local.contains(addr, len)
                    || (local.access & AccessFlags.LOCAL_WRITE) == 0) {
                return WcStatus.LOC_PROT_ERR;
            }
            long remote = c.remoteAddr(i);
            LoopbackRegistration source = memory.remoteUnlocked(peer, c.rkey(i), remote, len, AccessFlags.REMOTE_READ);
            if (source == null) {
                toError(peer);
                return WcStatus.REM_ACCESS_ERR;
            }
            source.copyTo(remote, local, addr, len);
        }
        byteLen = len;
        return WcStatus.SUCCESS;
    }

    private WcStatus atomic(SendWorkRequests c, int i, LoopbackQueuePair peer, WrOpcode op, long addr, int len,
            int lkey) {
        if (len != 8) {
            return WcStatus.LOC_LEN_ERR;
        }
        LoopbackRegistration local = memory.byLkeyUnlocked(lkey);
        if (local == null || local.pd != qp.pd || !local.contains(addr, 8)
                || (local.access & AccessFlags.LOCAL_WRITE) == 0) {
            return WcStatus.LOC_PROT_ERR;
        }
        long remote = c.remoteAddr(i);
        if ((remote & 7) != 0) {
            toError(peer);
            return WcStatus.REM_INV_REQ_ERR;
        }
        LoopbackRegistration target = memory.remoteUnlocked(peer, c.atomicRkey(i), remote, 8,
                AccessFlags.REMOTE_ATOMIC);
        if (target == null) {
            toError(peer);
            return WcStatus.REM_ACCESS_ERR;
        }
        long old = target.getLong(remote);
        if (op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
            target.putLong(remote, old + c.compareAdd(i));
        } else if (old == c.compareAdd(i)) {
            target.putLong(remote, c.swap(i));
        }
        local.putLong(addr, old);
        byteLen = 8;
        return WcStatus.SUCCESS;
    }

    /**
     * The registration a SEND or WRITE reads: by lkey, or for inline data (which needs no key: the CPU reads
     * the virtual address) the one containing the bytes, cached (a miss looks it up under the fabric lock).
     */
    private LoopbackRegistration source(int flags, long addr, int len, int lkey) {
        LoopbackRegistration r = memory.byLkeyUnlocked(lkey);
        if ((flags & SendFlags.INLINE) == 0) {
            return r != null && r.pd == qp.pd && r.contains(addr, len) ? r : null;
        }
        if (r != null && r.contains(addr, len)) {
            return r;
        }
        r = inlineSource;
        if (r != null && r.contains(addr, len) && memory.byLkeyUnlocked(r.lkey()) == r) {
            return r;
        }
        synchronized (qp.stack.lock) {
            r = memory.containing(addr, len);
        }
        inlineSource = r;
        return r;
    }

    private void takeOldestReceive() {
        recvHead = recvHead + 1 == recvWrId.length ? 0 : recvHead + 1;
        recvCount--;
    }

    /** Completes every posted receive with WR_FLUSH_ERR, in order (the QP is in ERR). Owner thread. */
    void flushReceives() {
        while (recvCount > 0) {
            long wrId = recvWrId[recvHead];
            takeOldestReceive();
            push(qp, wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0);
        }
    }

    /** ibv_destroy_qp: the receives are dropped without completions. */
    void clear() {
        recvCount = 0;
    }

    /** A QP (this one, or the responder) detected an error: to ERR, its receives flushed now, on this thread. */
    private static void toError(LoopbackQueuePair q) {
        boolean flush;
        synchronized (q.stack.lock) {
            flush = q.state == State.RTS || q.state == State.INIT;
            if (flush) {
                q.state = State.ERR;
            }
        }
        if (flush) {
            q.zero.flushReceives();
        }
    }

    private static void push(LoopbackQueuePair q, long wrId, WcStatus status, WcOpcode opcode, int byteLen, int imm,
            int flags) {
        q.cq.addOwned(q.qpNum(), wrId, status.value(), opcode.value(), byteLen, imm, flags);
    }

    private static PostRefusedException refused(String call, int errno, int index, String why) {
        return new PostRefusedException(call + " failed: errno " + errno + " at work request " + index + ": " + why,
                errno, index, null);
    }
}
