package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.loopback.LoopbackMemory.Check;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair.RecvWqe;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair.SendWqe;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair.State;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

/**
 * What the "wire" does, on the stack's wire thread under the fabric lock: executes the head of a connected
 * QP's send queue against its peer (RC semantics: one at a time, in order, a receiver-not-ready or an
 * unanswered request stalls the queue until retried), checks every key, range and access, moves the bytes,
 * and generates the completions. An error completes the failing request with its status and moves the QP to
 * ERR, which flushes the rest in order.
 */
final class LoopbackWire {
    private static final int BUDGET = 64;
    private final LoopbackStack stack;
    /** Messages that found no receive posted (each retry counts), under the fabric lock. */
    long rnrWaits;

    LoopbackWire(LoopbackStack stack) {
        this.stack = stack;
    }

    /** Schedules execution of {@code qp}'s send queue. Fabric lock held. */
    void kick(LoopbackQueuePair qp) {
        if (!qp.kickScheduled && !qp.waiting) {
            qp.kickScheduled = true;
            stack.schedule(() -> {
                synchronized (stack.lock) {
                    qp.kickScheduled = false;
                    process(qp);
                }
            }, stack.wireLatencyNs);
        }
    }

    /** After a hang: executes or flushes what waited. Fabric lock held. */
    void resume(LoopbackQueuePair qp) {
        if (qp.state == State.RTS) {
            kick(qp);
        } else if (qp.state == State.ERR) {
            scheduleFlush(qp);
        }
    }

    /** Schedules the flush of an ERR QP's queues. Fabric lock held. */
    void scheduleFlush(LoopbackQueuePair qp) {
        stack.schedule(() -> {
            synchronized (stack.lock) {
                flush(qp);
            }
        }, 0);
    }

    private void complete(LoopbackQueuePair qp, long wrId, WcStatus status, WcOpcode opcode, int byteLen, int imm,
            int flags) {
        qp.cq.push(new Completion(qp.qpNum(), wrId, status.value(), opcode.value(), status == WcStatus.SUCCESS ? 0 : 0x10,
                byteLen, imm, flags));
    }

    private void flush(LoopbackQueuePair qp) {
        if (qp.state != State.ERR || qp.pd.device.hung) {
            return;
        }
        SendWqe w;
        while ((w = qp.sq.poll()) != null) {
            complete(qp, w.wrId(), WcStatus.WR_FLUSH_ERR, sendOpcode(w.opcode()), 0, 0, 0);
        }
        RecvWqe r;
        while ((r = qp.rq.poll()) != null) {
            complete(qp, r.wrId(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, 0, 0);
        }
    }

    static WcOpcode sendOpcode(WrOpcode op) {
        switch (op) {
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM:
                return WcOpcode.RDMA_WRITE;
            case RDMA_READ:
                return WcOpcode.RDMA_READ;
            case ATOMIC_CMP_AND_SWP:
                return WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD:
                return WcOpcode.FETCH_ADD;
            case BIND_MW:
                return WcOpcode.BIND_MW;
            case LOCAL_INV:
                return WcOpcode.LOCAL_INV;
            default:
                return WcOpcode.SEND;
        }
    }

    private void process(LoopbackQueuePair qp) {
        int budget = BUDGET;
        while (qp.state == State.RTS && !qp.dead && !qp.waiting && !qp.sq.isEmpty() && !qp.pd.device.hung) {
            if (budget-- == 0) {
                kick(qp);
                return;
            }
            SendWqe w = qp.sq.peek();
            Result r = execute(qp, w);
            if (r.kind == Result.Kind.RNR) {
                if (qp.rnrRetryCount != 7 && ++qp.rnrAttempts > qp.rnrRetryCount) {
                    fail(qp, w, WcStatus.RNR_RETRY_EXC_ERR);
                    return;
                }
                retryLater(qp, qp.peer != null ? qp.peer.rnrDelayNanos() : stack.rnrDelay.toNanos());
                return;
            }
            if (r.kind == Result.Kind.NO_ANSWER) {
                if (++qp.retryAttempts > qp.retryCount) {
                    fail(qp, w, WcStatus.RETRY_EXC_ERR);
                    return;
                }
                retryLater(qp, stack.ackTimeout.toNanos());
                return;
            }
            if (r.kind == Result.Kind.FAILED) {
                fail(qp, w, r.status);
                return;
            }
            qp.sq.poll();
            qp.rnrAttempts = 0;
            qp.retryAttempts = 0;
            if (w.signaled()) {
                qp.signalledSendCompletions++;
                complete(qp, w.wrId(), WcStatus.SUCCESS, sendOpcode(w.opcode()), r.byteLen, 0, 0);
            } else {
                qp.pd.device.resources.outstanding(-1);
            }
        }
    }

    private void retryLater(LoopbackQueuePair qp, long delayNs) {
        qp.waiting = true;
        stack.schedule(() -> {
            synchronized (stack.lock) {
                qp.waiting = false;
                process(qp);
            }
        }, delayNs);
    }

    /** The head request failed: it completes with {@code status}, the QP goes to ERR and flushes the rest. */
    private void fail(LoopbackQueuePair qp, SendWqe w, WcStatus status) {
        qp.sq.poll();
        qp.rnrAttempts = 0;
        qp.retryAttempts = 0;
        complete(qp, w.wrId(), status, sendOpcode(w.opcode()), 0, 0, 0);
        qp.state = State.ERR;
        flush(qp);
    }

    /** The responder detected an error: its QP goes to ERR (its receives flush). */
    private void responderError(LoopbackQueuePair peer) {
        if (peer.state == State.RTS || peer.state == State.INIT) {
            peer.state = State.ERR;
            flush(peer);
        }
    }

    /** An outcome of executing one request: done, wait and retry, or failed with a status. */
    private static final class Result {
        enum Kind { DONE, RNR, NO_ANSWER, FAILED }

        static final Result RNR_WAIT = new Result(Kind.RNR, null, 0);
        static final Result NO_ANSWER_WAIT = new Result(Kind.NO_ANSWER, null, 0);
        final Kind kind;
        final WcStatus status;
        final int byteLen;

        Result(Kind kind, WcStatus status, int byteLen) {
            this.kind = kind;
            this.status = status;
            this.byteLen = byteLen;
        }

        static Result done(int len) {
            return new Result(Kind.DONE, WcStatus.SUCCESS, len);
        }

        static Result failed(WcStatus s) {
            return new Result(Kind.FAILED, s, 0);
        }
    }

    private Result execute(LoopbackQueuePair qp, SendWqe w) {
        WcStatus injected = stack.faults.takeCompletionFault(qp, w.opcode());
        if (injected != null) {
            return Result.failed(injected);
        }
        if (w.opcode() == WrOpcode.BIND_MW) {
            return bind(qp, w.bind());
        }
        if (w.opcode() == WrOpcode.LOCAL_INV) {
            return invalidate(qp, w.rkey());
        }
        if (qp.ud) {
            byte[] data = localSource(qp, w, new Check[1]);
            Integer sent = data == null ? null : stack.datagrams.send(qp, w, data);
            return sent == null ? Result.failed(WcStatus.LOC_PROT_ERR) : Result.done(sent);
        }
        LoopbackQueuePair peer = qp.peer;
        if (peer == null || peer.state != State.RTS || peer.dead) {
            return Result.NO_ANSWER_WAIT; // packets to a QP that is gone, in ERR or dead are dropped
        }
        Check[] why = new Check[1];
        switch (w.opcode()) {
            case SEND:
            case SEND_WITH_IMM: {
                byte[] data = localSource(qp, w, why);
                if (data == null) {
                    return Result.failed(WcStatus.LOC_PROT_ERR);
                }
                RecvWqe r = peer.takeReceive();
                if (r == null) {
                    rnrWaits++;
                    return Result.RNR_WAIT;
                }
                if (data.length > r.length()) {
                    complete(peer, r.wrId(), WcStatus.LOC_LEN_ERR, WcOpcode.RECV, 0, 0, 0);
                    responderError(peer);
                    return Result.failed(WcStatus.REM_INV_REQ_ERR);
                }
                if (data.length > 0) {
                    LoopbackRegistration target = stack.memory.local(peer.pd, r.lkey(), r.addr(), data.length,
                            AccessFlags.LOCAL_WRITE, why);
                    if (target == null) {
                        complete(peer, r.wrId(), WcStatus.LOC_PROT_ERR, WcOpcode.RECV, 0, 0, 0);
                        responderError(peer);
                        return Result.failed(WcStatus.REM_OP_ERR);
                    }
                    target.write(r.addr(), data, data.length);
                }
                boolean imm = w.opcode() == WrOpcode.SEND_WITH_IMM;
                complete(peer, r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV, data.length, imm ? w.imm() : 0,
                        imm ? WcFlags.WITH_IMM : 0);
                return Result.done(data.length);
            }
            case RDMA_WRITE:
            case RDMA_WRITE_WITH_IMM: {
                byte[] data = localSource(qp, w, why);
                if (data == null) {
                    return Result.failed(WcStatus.LOC_PROT_ERR);
                }
                boolean imm = w.opcode() == WrOpcode.RDMA_WRITE_WITH_IMM;
                if (imm && !peer.hasReceive()) {
                    rnrWaits++;
                    return Result.RNR_WAIT;
                }
                if (data.length > 0) {
                    LoopbackRegistration target = stack.memory.remote(peer, w.rkey(), w.remoteAddr(), data.length,
                            AccessFlags.REMOTE_WRITE, why);
                    if (target == null) {
                        responderError(peer);
                        return Result.failed(WcStatus.REM_ACCESS_ERR);
                    }
                    target.write(w.remoteAddr(), data, data.length);
                }
                if (imm) {
                    RecvWqe r = peer.takeReceive();
                    complete(peer, r.wrId(), WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM, data.length, w.imm(),
                            WcFlags.WITH_IMM);
                }
                return Result.done(data.length);
            }
            case RDMA_READ: {
                int len = w.hasSge() ? w.length() : 0;
                LoopbackRegistration local = null;
                if (len > 0) {
                    local = stack.memory.local(qp.pd, w.lkey(), w.addr(), len, AccessFlags.LOCAL_WRITE, why);
                    if (local == null) {
                        return Result.failed(WcStatus.LOC_PROT_ERR);
                    }
                    LoopbackRegistration source = stack.memory.remote(peer, w.rkey(), w.remoteAddr(), len,
                            AccessFlags.REMOTE_READ, why);
                    if (source == null) {
                        responderError(peer);
                        return Result.failed(WcStatus.REM_ACCESS_ERR);
                    }
                    local.write(w.addr(), source.read(w.remoteAddr(), len), len);
                }
                return Result.done(len);
            }
            case ATOMIC_CMP_AND_SWP:
            case ATOMIC_FETCH_AND_ADD: {
                if (!w.hasSge() || w.length() != 8) {
                    return Result.failed(WcStatus.LOC_LEN_ERR);
                }
                LoopbackRegistration local = stack.memory.local(qp.pd, w.lkey(), w.addr(), 8, AccessFlags.LOCAL_WRITE,
                        why);
                if (local == null) {
                    return Result.failed(WcStatus.LOC_PROT_ERR);
                }
                if ((w.remoteAddr() & 7) != 0) {
                    responderError(peer);
                    return Result.failed(WcStatus.REM_INV_REQ_ERR);
                }
                LoopbackRegistration target = stack.memory.remote(peer, w.rkey(), w.remoteAddr(), 8,
                        AccessFlags.REMOTE_ATOMIC, why);
                if (target == null) {
                    responderError(peer);
                    return Result.failed(WcStatus.REM_ACCESS_ERR);
                }
                long old = target.getLong(w.remoteAddr());
                if (w.opcode() == WrOpcode.ATOMIC_FETCH_AND_ADD) {
                    target.putLong(w.remoteAddr(), old + w.compareAdd());
                } else if (old == w.compareAdd()) {
                    target.putLong(w.remoteAddr(), w.swap());
                }
                local.putLong(w.addr(), old);
                return Result.done(8);
            }
            default:
                return Result.failed(WcStatus.LOC_QP_OP_ERR);
        }
    }

    /**
     * BIND_MW, a local operation in send-queue order (rxe's checks): the window of this PD must be invalid,
     * the new rkey must keep its index, the region must be of this PD, allow MW_BIND (and LOCAL_WRITE for
     * remote write or atomics) and contain the range. Then the window is valid for remote requests that
     * arrive on {@code qp}.
     */
    private Result bind(LoopbackQueuePair qp, LoopbackQueuePair.Bind b) {
        LoopbackWindow mw = stack.memory.window(b.window());
        LoopbackRegistration mr = stack.memory.registrationAt(b.region());
        boolean writes = (b.access() & (AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC)) != 0;
        if (mw == null || mw.pd != qp.pd || mw.isBound() || (b.newRkey() >>> 8) != (mw.rkey >>> 8)
                || mr == null || mr.pd != qp.pd || (mr.access & AccessFlags.MW_BIND) == 0
                || (writes && (mr.access & AccessFlags.LOCAL_WRITE) == 0)
                || b.length() < 0 || b.address() < mr.address() || b.address() + b.length() > mr.address() + mr.length()) {
            return Result.failed(WcStatus.MW_BIND_ERR);
        }
        mw.boundQp = qp;
        mw.region = mr;
        mw.address = b.address();
        mw.length = b.length();
        mw.access = b.access();
        mw.rkey = b.newRkey();
        return Result.done(0);
    }

    /** LOCAL_INV of a bound window's current rkey. */
    private Result invalidate(LoopbackQueuePair qp, int rkey) {
        LoopbackWindow mw = stack.memory.windowByRkey(rkey);
        if (mw == null || mw.pd != qp.pd || !mw.isBound()) {
            return Result.failed(WcStatus.LOC_QP_OP_ERR);
        }
        mw.invalidate();
        return Result.done(0);
    }

    /** BIND_MW executed at once by the zero-cost path ({@link ZeroCostQueuePair}), under the fabric lock. */
    WcStatus bindNow(LoopbackQueuePair qp, LoopbackQueuePair.Bind b) {
        synchronized (stack.lock) {
            return bind(qp, b).status;
        }
    }

    /** LOCAL_INV executed at once by the zero-cost path, under the fabric lock. */
    WcStatus invalidateNow(LoopbackQueuePair qp, int rkey) {
        synchronized (stack.lock) {
            return invalidate(qp, rkey).status;
        }
    }

    /** The bytes a SEND or WRITE carries: the inline copy, or the local SGE read now. Null: local protection. */
    private byte[] localSource(LoopbackQueuePair qp, SendWqe w, Check[] why) {
        if (w.inline() != null) {
            return w.inline();
        }
        if (!w.hasSge() || w.length() == 0) {
            return new byte[0];
        }
        LoopbackRegistration r = stack.memory.local(qp.pd, w.lkey(), w.addr(), w.length(), 0, why);
        return r == null ? null : r.read(w.addr(), w.length());
    }
}
