package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeCallException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The five data-path verbs on the real device through each calling mechanism: on JDK 22+ the device tests
 * run on FFM downcalls, and every verb (post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq) gives
 * the same results, completions and errors through FFM as through libffi. On JDK 17-21 (no FFM) libffi is
 * compared with the JNA Function fallback instead.
 */
@Tag("rxe")
class DowncallAgreementRxeTest {
    private static final boolean FFM_JDK = Runtime.version().feature() >= 22;

    @AfterEach
    void restore() {
        Downcalls.inUse = Downcalls.chosen();
    }

    @Test
    void theDeviceTestsRunOnFfmOnJdk22AndLibffiBefore() {
        assertEquals(FFM_JDK ? Downcalls.Mechanism.FFM : Downcalls.Mechanism.LIBFFI, Downcalls.chosen(), Verbs.dataPathCalls());
        System.out.println("DowncallAgreementRxeTest: java " + Runtime.version() + ", data path: " + Verbs.dataPathCalls());
    }

    @Test
    void everyDataPathVerbGivesTheSameResultsThroughFfmAndLibffi() {
        Downcalls.Mechanism first = FFM_JDK ? Downcalls.Mechanism.FFM : Downcalls.Mechanism.LIBFFI;
        Downcalls.Mechanism second = FFM_JDK ? Downcalls.Mechanism.LIBFFI : Downcalls.Mechanism.JNA;
        List<String> a = transcript(first);
        List<String> b = transcript(second);
        assertTrue(a.size() >= 9, String.valueOf(a));
        assertEquals(a, b, first + " vs " + second);
    }

    /** Every verb once, recorded without addresses or QP numbers (they differ between runs). */
    private static List<String> transcript(Downcalls.Mechanism mechanism) {
        Downcalls.inUse = mechanism;
        List<String> t = new ArrayList<>();
        try (VerbsContext ctx = Rxe.open()) {
            ProtectionDomain pd = ctx.allocPd();
            CompletionChannel channel = ctx.createCompletionChannel();
            CompletionQueue sendCq = ctx.createCompletionQueue(64, null, 0);
            CompletionQueue recvCq = ctx.createCompletionQueue(64, channel, 0);
            SharedReceiveQueue srq = pd.createSharedReceiveQueue(16, 1, 0);
            QueuePair a = pd.createQueuePair(QpInitAttributes.rc(sendCq).maxSendWr(16).maxRecvWr(16));
            QueuePair b = pd.createQueuePair(QpInitAttributes.rc(recvCq).maxSendWr(16).maxRecvWr(16));
            QueuePair c = pd.createQueuePair(QpInitAttributes.rc(sendCq).maxSendWr(16).maxRecvWr(16));
            QueuePair d = pd.createQueuePair(QpInitAttributes.rc(recvCq).maxSendWr(16).srq(srq));
            Rxe.connect(ctx, a, b);
            Rxe.connect(ctx, c, d);
            ByteBuffer buffer = Rxe.direct(4096);
            Rxe.fill(buffer, 0, 64, 7);
            MemoryRegion mr = pd.registerMemory(buffer, AccessFlags.ALL_REMOTE);
            WorkCompletions wcs = new WorkCompletions(16);

            t.add("poll_cq of an empty CQ: " + recvCq.poll(wcs));
            recvCq.requestNotify(false);
            ReceiveWorkRequests recv = new ReceiveWorkRequests(1, 1);
            recv.add(11, mr, 1024, 64);
            b.postReceive(recv);
            SendWorkRequests send = new SendWorkRequests(2, 1);
            send.sge(send.add(21, WrOpcode.SEND, 0), mr, 0, 5);
            send.sge(send.add(22, WrOpcode.SEND_WITH_IMM, SendFlags.SIGNALED), mr, 5, 7);
            send.immData(1, 0x1234);
            recv.clear();
            recv.add(12, mr, 1100, 64);
            b.postReceive(recv);
            a.postSend(send);
            CompletionQueue evented = channel.awaitEvent(Rxe.WAIT);
            assertSame(recvCq, evented, "req_notify_cq armed the receive CQ: its event must come");
            recvCq.ackEvents(1);
            t.add("req_notify_cq: event on the receive CQ");
            for (Rxe.Wc wc : Rxe.await(recvCq, 2)) {
                t.add("post_recv completion: " + describe(wc));
            }
            t.add("post_send completion: " + describe(Rxe.await(sendCq, 1).get(0)));
            t.add("received: " + java.util.Arrays.toString(Rxe.bytes(buffer, 1024, 5)) + " "
                    + java.util.Arrays.toString(Rxe.bytes(buffer, 1100, 7)));

            ReceiveWorkRequests srqRecv = new ReceiveWorkRequests(1, 1);
            srqRecv.add(31, mr, 2048, 64);
            srq.postReceive(srqRecv);
            SendWorkRequests toSrq = new SendWorkRequests(1, 1);
            toSrq.sge(toSrq.add(41, WrOpcode.SEND, SendFlags.SIGNALED), mr, 0, 9);
            c.postSend(toSrq);
            t.add("post_srq_recv completion: " + describe(Rxe.await(recvCq, 1).get(0)));
            t.add("post_send completion: " + describe(Rxe.await(sendCq, 1).get(0)));
            t.add("poll_cq when drained: " + recvCq.poll(wcs) + " " + sendCq.poll(wcs));

            // post_recv until the receive queue is full: the same count and the same errno either way.
            int posted = 0;
            String refused = "never refused";
            for (; posted < 1024; posted++) {
                recv.clear();
                recv.add(100 + posted, mr, 3000, 16);
                try {
                    b.postReceive(recv);
                } catch (NativeCallException e) {
                    refused = e.call() + " errno " + e.errno();
                    break;
                }
            }
            t.add("post_recv refused after " + posted + ": " + refused);
        } finally {
            Downcalls.inUse = Downcalls.chosen();
        }
        return t;
    }

    private static String describe(Rxe.Wc wc) {
        return wc.wrId() + " " + wc.status() + " " + wc.opcode() + " " + wc.byteLen() + " B"
                + (wc.hasImm() ? " imm " + Integer.toHexString(wc.immData()) : "");
    }
}
