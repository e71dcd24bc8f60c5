package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.buffer;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.recv;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;

/** RDMA WRITE, READ and atomics on a connected loopback QP pair: remote keys, ranges, access, alignment. */
@Timeout(30)
class LoopbackOneSidedTest {
    private static final int LW = AccessFlags.LOCAL_WRITE;
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private static void assertCompletion(Completion c, long wrId, WcStatus status, WcOpcode opcode) {
        assertEquals(wrId, c.wrId(), "wr_id of " + c);
        assertEquals(status, WcStatus.of(c.status()), "status of " + c);
        if (opcode != null) {
            assertEquals(opcode, WcOpcode.of(c.opcode()), "opcode of " + c);
        }
    }

    @Test
    void writeNeedsRemoteWriteAndALiveRkeyInRange() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration readOnly = register(f.serverPd, 64, LW | AccessFlags.REMOTE_READ);
        SendWorkRequests w = send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8).rdma(0,
                readOnly.address(), readOnly.rkey());
        f.clientQp.postSend(w);
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.REM_ACCESS_ERR, WcOpcode.RDMA_WRITE);
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.serverQp).state(),
                "a remote access error moves the responder to ERR too");
    }

    @Test
    void aDeregisteredRkeyIsStale() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration target = register(f.serverPd, 64, LW | AccessFlags.REMOTE_WRITE);
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8)
                .rdma(0, target.address() + 56, target.rkey()));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
        target.deregister();
        f.clientQp.postSend(send(2, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8)
                .rdma(0, target.address(), target.rkey()));
        assertCompletion(completions(f.clientCq, 1).get(0), 2, WcStatus.REM_ACCESS_ERR, null);
    }

    @Test
    void writeOutOfTheRemoteRangeIsARemoteAccessError() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration target = register(f.serverPd, 64, LW | AccessFlags.REMOTE_WRITE);
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 16)
                .rdma(0, target.address() + 56, target.rkey()));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.REM_ACCESS_ERR, null);
    }

    @Test
    void readCopiesRemoteBytesAndNeedsLocalWrite() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration dst = register(f.clientPd, 64, LW);
        Registration noWrite = register(f.clientPd, 64, 0);
        Registration source = register(f.serverPd, 64, AccessFlags.REMOTE_READ);
        buffer(source).putLong(8, 0x1122334455667788L);
        f.clientQp.postSend(send(1, WrOpcode.RDMA_READ, SendFlags.SIGNALED, dst, 0, 8)
                .rdma(0, source.address() + 8, source.rkey()));
        Completion c = completions(f.clientCq, 1).get(0);
        assertCompletion(c, 1, WcStatus.SUCCESS, WcOpcode.RDMA_READ);
        assertEquals(8, c.byteLen());
        assertEquals(0x1122334455667788L, buffer(dst).getLong(0));
        f.clientQp.postSend(send(2, WrOpcode.RDMA_READ, SendFlags.SIGNALED, noWrite, 0, 8)
                .rdma(0, source.address(), source.rkey()));
        assertCompletion(completions(f.clientCq, 1).get(0), 2, WcStatus.LOC_PROT_ERR, null);
    }

    @Test
    void atomicsOnLittleEndianWordsWithAlignmentAndAccessChecks() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration result = register(f.clientPd, 8, LW);
        Registration word = register(f.serverPd, 64, LW | AccessFlags.REMOTE_ATOMIC);
        ByteBuffer w = buffer(word).order(ByteOrder.LITTLE_ENDIAN);
        w.putLong(16, 40);
        SendWorkRequests faa = new SendWorkRequests(1, 1);
        faa.add(1, WrOpcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
        faa.sge(0, result.address(), 8, result.lkey()).atomic(0, word.address() + 16, word.rkey(), 2, 0);
        f.clientQp.postSend(faa);
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.FETCH_ADD);
        assertEquals(40, buffer(result).order(ByteOrder.LITTLE_ENDIAN).getLong(0));
        assertEquals(42, w.getLong(16));
        SendWorkRequests cas = new SendWorkRequests(1, 1);
        cas.add(2, WrOpcode.ATOMIC_CMP_AND_SWP, SendFlags.SIGNALED);
        cas.sge(0, result.address(), 8, result.lkey()).atomic(0, word.address() + 16, word.rkey(), 42, 7);
        f.clientQp.postSend(cas);
        assertCompletion(completions(f.clientCq, 1).get(0), 2, WcStatus.SUCCESS, WcOpcode.COMP_SWAP);
        assertEquals(7, w.getLong(16));
        SendWorkRequests misaligned = new SendWorkRequests(1, 1);
        misaligned.add(3, WrOpcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
        misaligned.sge(0, result.address(), 8, result.lkey()).atomic(0, word.address() + 8, word.rkey(), 1, 0);
        // The flyweight refuses a misaligned address; a raw chain can still carry one (a C caller could).
        misaligned.buffer().putLong((int) (misaligned.address(0) - misaligned.address())
                + SendWorkRequests.ATOMIC_REMOTE_ADDR_OFFSET, word.address() + 4);
        assertEquals(word.address() + 4, misaligned.remoteAddr(0));
        f.clientQp.postSend(misaligned);
        assertCompletion(completions(f.clientCq, 1).get(0), 3, WcStatus.REM_INV_REQ_ERR, null);
    }

    @Test
    void atomicsNeedRemoteAtomicAccess() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration result = register(f.clientPd, 8, LW);
        Registration word = register(f.serverPd, 64, LW | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        SendWorkRequests faa = new SendWorkRequests(1, 1);
        faa.add(1, WrOpcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
        faa.sge(0, result.address(), 8, result.lkey()).atomic(0, word.address(), word.rkey(), 2, 0);
        f.clientQp.postSend(faa);
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.REM_ACCESS_ERR, null);
    }

    @Test
    void writeWithImmediateConsumesAReceiveWithoutTouchingItsBuffer() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration target = register(f.serverPd, 64, LW | AccessFlags.REMOTE_WRITE);
        Registration rbuf = register(f.serverPd, 4, LW);
        buffer(src).put(0, (byte) 5).put(1, (byte) 6);
        buffer(rbuf).put(0, (byte) 99);
        f.serverQp.postReceive(recv(7, rbuf, 0, 4));
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED, src, 0, 2)
                .rdma(0, target.address() + 10, target.rkey()).immData(0, 77));
        Completion r = completions(f.serverCq, 1).get(0);
        assertCompletion(r, 7, WcStatus.SUCCESS, WcOpcode.RECV_RDMA_WITH_IMM);
        assertEquals(77, r.immData());
        assertEquals(WcFlags.WITH_IMM, r.wcFlags() & WcFlags.WITH_IMM);
        assertEquals(6, buffer(target).get(11));
        assertEquals(99, buffer(rbuf).get(0), "the receive buffer is not written");
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
    }
}
