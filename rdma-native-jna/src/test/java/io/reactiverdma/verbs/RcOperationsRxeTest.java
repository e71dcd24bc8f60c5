package io.reactiverdma.verbs;

import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Data movement over a pair of RC QPs on one device, brought up out of band (no rdma_cm) the way
 * ibv_rc_pingpong does it. Every transfer is checked byte for byte.
 */
@Tag("rxe")
class RcOperationsRxeTest {
    private static final int SIZE = 64 * 1024;

    private VerbsContext ctx;
    private ProtectionDomain pd;
    private CompletionQueue cqA;
    private CompletionQueue cqB;
    private QueuePair a;
    private QueuePair b;
    private ByteBuffer bufA;
    private ByteBuffer bufB;
    private MemoryRegion mrA;
    private MemoryRegion mrB;

    @BeforeEach
    void connect() {
        RxeTestSupport.requireDevice();
        ctx = Rxe.open();
        pd = ctx.allocPd();
        cqA = ctx.createCompletionQueue(64, null, 0);
        cqB = ctx.createCompletionQueue(64, null, 0);
        a = pd.createQueuePair(QpInitAttributes.rc(cqA).maxSendWr(32).maxRecvWr(32).maxSendSge(4).maxRecvSge(4)
                .maxInlineData(128));
        b = pd.createQueuePair(QpInitAttributes.rc(cqB).maxSendWr(32).maxRecvWr(32).maxSendSge(4).maxRecvSge(4));
        Rxe.connect(ctx, a, b);
        bufA = Rxe.direct(SIZE);
        bufB = Rxe.direct(SIZE);
        mrA = pd.registerMemory(bufA, AccessFlags.ALL_REMOTE);
        mrB = pd.registerMemory(bufB, AccessFlags.ALL_REMOTE);
    }

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private void postRecv(long wrId, int offset, int length) {
        ReceiveWorkRequests r = new ReceiveWorkRequests(1, 1);
        r.add(wrId, mrB, offset, length);
        b.postReceive(r);
    }

    @Test
    void sendAndReceive() {
        postRecv(7, 100, 4096);
        Rxe.fill(bufA, 0, 1500, 1);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        s.sge(s.add(42, WrOpcode.SEND, SendFlags.SIGNALED), mrA, 0, 1500);
        a.postSend(s);

        Rxe.Wc sent = Rxe.awaitSuccess(cqA);
        assertEquals(42, sent.wrId());
        assertEquals(WcOpcode.SEND, sent.opcode());
        Rxe.Wc recv = Rxe.awaitSuccess(cqB);
        assertEquals(7, recv.wrId());
        assertEquals(WcOpcode.RECV, recv.opcode());
        assertEquals(1500, recv.byteLen());
        assertEquals(b.qpNum(), recv.qpNum());
        assertTrue(!recv.hasImm());
        assertArrayEquals(Rxe.pattern(1500, 1), Rxe.bytes(bufB, 100, 1500));
    }

    @Test
    void sendWithImmediateCarriesTheImmediate() {
        postRecv(8, 0, 256);
        Rxe.fill(bufA, 0, 200, 2);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int i = s.add(43, WrOpcode.SEND_WITH_IMM, SendFlags.SIGNALED);
        s.sge(i, mrA, 0, 200).immData(i, 0xCAFEBABE);
        a.postSend(s);

        Rxe.awaitSuccess(cqA);
        Rxe.Wc recv = Rxe.awaitSuccess(cqB);
        assertEquals(WcOpcode.RECV, recv.opcode());
        assertTrue(recv.hasImm(), recv.text());
        assertEquals(0xCAFEBABE, recv.immData());
        assertEquals(200, recv.byteLen());
        assertArrayEquals(Rxe.pattern(200, 2), Rxe.bytes(bufB, 0, 200));
    }

    @Test
    void rdmaWriteThenRead() throws InterruptedException {
        Rxe.fill(bufA, 0, 10_000, 3);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int w = s.add(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
        s.sge(w, mrA, 0, 10_000).rdma(w, mrB.address() + 1000, mrB.rkey());
        a.postSend(s);
        Rxe.Wc wc = Rxe.awaitSuccess(cqA);
        assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
        assertArrayEquals(Rxe.pattern(10_000, 3), Rxe.bytes(bufB, 1000, 10_000));
        Rxe.assertNoCompletion(cqB, 50); // one-sided: the target sees nothing

        Rxe.fill(bufB, 20_000, 30_000, 4);
        s.clear();
        int r = s.add(2, WrOpcode.RDMA_READ, SendFlags.SIGNALED);
        s.sge(r, mrA, 30_000, 30_000).rdma(r, mrB.address() + 20_000, mrB.rkey());
        a.postSend(s);
        wc = Rxe.awaitSuccess(cqA);
        assertEquals(WcOpcode.RDMA_READ, wc.opcode());
        assertEquals(2, wc.wrId());
        assertArrayEquals(Rxe.pattern(30_000, 4), Rxe.bytes(bufA, 30_000, 30_000));
    }

    @Test
    void rdmaWriteWithImmediateConsumesAReceive() {
        postRecv(9, 0, 16); // the data goes to the remote address, not to this buffer
        Rxe.fill(bufA, 0, 3000, 5);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int i = s.add(3, WrOpcode.RDMA_WRITE_WITH_IMM, SendFlags.SIGNALED);
        s.sge(i, mrA, 0, 3000).rdma(i, mrB.address() + 5000, mrB.rkey()).immData(i, 0x01020304);
        a.postSend(s);

        Rxe.awaitSuccess(cqA);
        Rxe.Wc recv = Rxe.awaitSuccess(cqB);
        assertEquals(9, recv.wrId());
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, recv.opcode());
        assertEquals(0x01020304, recv.immData());
        assertEquals(3000, recv.byteLen());
        assertArrayEquals(Rxe.pattern(3000, 5), Rxe.bytes(bufB, 5000, 3000));
    }

    @Test
    void compareAndSwapAndFetchAndAdd() {
        int target = 4096; // 8-byte aligned
        bufB.putLong(target, 42L);
        SendWorkRequests s = new SendWorkRequests(1, 1);

        // CAS 42 -> 100 succeeds: returns the old value 42.
        int i = s.add(1, WrOpcode.ATOMIC_CMP_AND_SWP, SendFlags.SIGNALED);
        s.sge(i, mrA, 0, 8).atomic(i, mrB.address() + target, mrB.rkey(), 42L, 100L);
        a.postSend(s);
        assertEquals(WcOpcode.COMP_SWAP, Rxe.awaitSuccess(cqA).opcode());
        assertEquals(42L, bufA.getLong(0), "CAS returns the original value");
        assertEquals(100L, bufB.getLong(target));

        // CAS 42 -> 7 fails: the value stays 100, and 100 comes back.
        s.clear();
        i = s.add(2, WrOpcode.ATOMIC_CMP_AND_SWP, SendFlags.SIGNALED);
        s.sge(i, mrA, 8, 8).atomic(i, mrB.address() + target, mrB.rkey(), 42L, 7L);
        a.postSend(s);
        Rxe.awaitSuccess(cqA);
        assertEquals(100L, bufA.getLong(8));
        assertEquals(100L, bufB.getLong(target), "a failed compare leaves the value");

        // FAA +0x1_0000_0005 returns 100 and leaves 100 + 0x1_0000_0005 (a carry across 32 bits).
        s.clear();
        i = s.add(3, WrOpcode.ATOMIC_FETCH_AND_ADD, SendFlags.SIGNALED);
        s.sge(i, mrA, 16, 8).atomic(i, mrB.address() + target, mrB.rkey(), 0x1_0000_0005L, 0L);
        a.postSend(s);
        assertEquals(WcOpcode.FETCH_ADD, Rxe.awaitSuccess(cqA).opcode());
        assertEquals(100L, bufA.getLong(16));
        assertEquals(100L + 0x1_0000_0005L, bufB.getLong(target));
    }

    @Test
    void chainOfSixteenSendsInOnePost() {
        ReceiveWorkRequests r = new ReceiveWorkRequests(16, 1);
        for (int k = 0; k < 16; k++) {
            r.add(100 + k, mrB, k * 256L, 256);
        }
        b.postReceive(r);
        SendWorkRequests s = new SendWorkRequests(16, 1);
        for (int k = 0; k < 16; k++) {
            Rxe.fill(bufA, k * 128, 100 + k, 10 + k);
            s.sge(s.add(k, WrOpcode.SEND, SendFlags.SIGNALED), mrA, k * 128L, 100 + k);
        }
        assertEquals(0, s.next(15), "the last work request ends the chain");
        a.postSend(s);

        List<Rxe.Wc> sends = Rxe.await(cqA, 16);
        List<Rxe.Wc> recvs = Rxe.await(cqB, 16);
        for (int k = 0; k < 16; k++) {
            assertEquals(WcStatus.SUCCESS, sends.get(k).status(), sends.get(k).text());
            assertEquals(k, sends.get(k).wrId(), "send completions in posting order");
            Rxe.Wc wc = recvs.get(k);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.text());
            assertEquals(100 + k, wc.wrId());
            assertEquals(100 + k, wc.byteLen());
            assertArrayEquals(Rxe.pattern(100 + k, 10 + k), Rxe.bytes(bufB, k * 256, 100 + k), "message " + k);
        }
    }

    @Test
    void inlineSendNeedsNoRegisteredMemory() {
        assertTrue(a.capabilities().maxInlineData() >= 128, a.capabilities().toString());
        postRecv(11, 0, 256);
        ByteBuffer unregistered = Rxe.direct(128);
        Rxe.fill(unregistered, 0, 128, 6);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        int i = s.add(12, WrOpcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE);
        s.sge(i, Buffers.address(unregistered), 128, 0);
        a.postSend(s);
        Rxe.fill(unregistered, 0, 128, 99); // inline: the buffer is free once post returns
        Rxe.awaitSuccess(cqA);
        Rxe.Wc recv = Rxe.awaitSuccess(cqB);
        assertEquals(128, recv.byteLen());
        assertArrayEquals(Rxe.pattern(128, 6), Rxe.bytes(bufB, 0, 128));
    }

    @Test
    void multiSgeGatherIntoScatter() {
        // Receive scatters into two pieces: 100 bytes at 0 and the rest at 8000.
        ReceiveWorkRequests r = new ReceiveWorkRequests(1, 2);
        int ri = r.add(13);
        r.sge(ri, mrB, 0, 100).sge(ri, mrB, 8000, 1000);
        b.postReceive(r);
        // Send gathers three pieces of A's buffer.
        Rxe.fill(bufA, 0, 50, 20);
        Rxe.fill(bufA, 1000, 70, 21);
        Rxe.fill(bufA, 2000, 300, 22);
        SendWorkRequests s = new SendWorkRequests(1, 3);
        int i = s.add(14, WrOpcode.SEND, SendFlags.SIGNALED);
        s.sge(i, mrA, 0, 50).sge(i, mrA, 1000, 70).sge(i, mrA, 2000, 300);
        assertEquals(3, s.numSge(i));
        a.postSend(s);

        Rxe.awaitSuccess(cqA);
        assertEquals(420, Rxe.awaitSuccess(cqB).byteLen());
        ByteBuffer expected = ByteBuffer.allocate(420);
        expected.put(Rxe.pattern(50, 20)).put(Rxe.pattern(70, 21)).put(Rxe.pattern(300, 22));
        byte[] e = expected.array();
        assertArrayEquals(java.util.Arrays.copyOfRange(e, 0, 100), Rxe.bytes(bufB, 0, 100));
        assertArrayEquals(java.util.Arrays.copyOfRange(e, 100, 420), Rxe.bytes(bufB, 8000, 320));
    }

    @Test
    void unsignaledSendsCompleteSilently() {
        ReceiveWorkRequests r = new ReceiveWorkRequests(3, 1);
        for (int k = 0; k < 3; k++) {
            r.add(k, mrB, k * 64L, 64);
        }
        b.postReceive(r);
        SendWorkRequests s = new SendWorkRequests(3, 1);
        s.sge(s.add(1, WrOpcode.SEND, 0), mrA, 0, 8);
        s.sge(s.add(2, WrOpcode.SEND, 0), mrA, 0, 8);
        s.sge(s.add(3, WrOpcode.SEND, SendFlags.SIGNALED), mrA, 0, 8);
        a.postSend(s);
        Rxe.Wc only = Rxe.awaitSuccess(cqA);
        assertEquals(3, only.wrId(), "only the signaled send completes");
        assertEquals(3, Rxe.await(cqB, 3).size());
    }
}
