package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.drain;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.recv;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The loopback SRQ has rxe's semantics: a QP created on it takes its receives from it in posting order and
 * its completions name that QP's number; a send finds RNR when the SRQ is empty and goes once a receive is
 * posted; the armed limit raises one SRQ_LIMIT_REACHED event; the QP's own ibv_post_recv is refused; the
 * SRQ cannot be destroyed while a QP uses it.
 */
class LoopbackSharedReceiveQueueTest {
    private static final int LW = AccessFlags.LOCAL_WRITE;
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    /** Completions with their QP numbers: {qpNum, wrId, status}. */
    private static List<long[]> withQpNum(CompletionQueue cq, int n) {
        List<long[]> got = new ArrayList<>();
        long deadline = System.nanoTime() + LoopbackFixture.WAIT_NS;
        while (got.size() < n && System.nanoTime() - deadline < 0) {
            cq.poll(new CompletionQueue.Handler() {
                @Override
                public void onCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData,
                        int wcFlags) {
                    throw new AssertionError("the queue must call the qp_num variant");
                }

                @Override
                public void onCompletion(int qpNum, long wrId, int status, int opcode, int vendorErr, int byteLen,
                        int immData, int wcFlags) {
                    got.add(new long[] {qpNum, wrId, status});
                }
            });
            Thread.onSpinWait();
        }
        assertEquals(n, got.size(), "completions within 5 s");
        return got;
    }

    @Test
    void aQueuePairOnAnSrqTakesItsReceivesRnrWhenEmptyAndTheLimitFires() {
        f = new LoopbackFixture(LoopbackStack.builder().device("loopback0", "127.0.0.1").rnrDelay(java.time.Duration.ofMillis(2)).build());
        int port = f.listen();
        f.prepareClient(port, new QpSpec(16, 16, 64));
        // RNR retried for ever (7), so the message that meets an empty SRQ waits for the next receive.
        io.reactiverdma.reactive.impl.verbs.ConnectSpec patient = new io.reactiverdma.reactive.impl.verbs.ConnectSpec(4, 4, 3, 7, null);
        f.client.connect(patient);
        f.server = LoopbackFixture.next(f.serverChannel, io.reactiverdma.cm.CmEventType.CONNECT_REQUEST).id();
        f.serverPd = f.server.device().allocateProtectionDomain();
        f.serverCq = f.server.device().createCompletionQueue(64, false, 16, "server-cq");
        LoopbackSharedReceiveQueue srq = (LoopbackSharedReceiveQueue) f.serverPd.createSharedReceiveQueue(4);
        f.serverQp = f.server.createQueuePair(f.serverPd, f.serverCq, new QpSpec(16, 0, 64, srq));
        f.accept(patient);

        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 4 * 64, LW);
        assertThrows(PostRefusedException.class, () -> f.serverQp.postReceive(recv(9, dst, 0, 64)),
                "a QP on an SRQ has no receive queue of its own");
        for (int i = 0; i < 4; i++) {
            srq.postReceive(recv(100 + i, dst, i * 64L, 64));
        }
        srq.armLimit(2);
        for (int i = 0; i < 3; i++) {
            f.clientQp.postSend(send(i, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        }
        List<long[]> got = withQpNum(f.serverCq, 3);
        for (int i = 0; i < 3; i++) {
            assertEquals(f.serverQp.qpNum(), got.get(i)[0], "the consuming QP's number");
            assertEquals(100 + i, got.get(i)[1], "the SRQ's receives in posting order");
            assertEquals(WcStatus.SUCCESS.value(), got.get(i)[2]);
        }
        AsyncEventInfo e = f.server.device().awaitAsyncEvent(TimeUnit.SECONDS.toNanos(5));
        assertNotNull(e, "SRQ_LIMIT_REACHED once fewer than 2 receives remain");
        assertEquals(AsyncEventType.SRQ_LIMIT_REACHED, e.type());
        assertEquals(srq, e.srq());
        assertEquals(1, srq.limitEvents(), "the limit disarms after firing");

        long rnrBefore = f.stack.rnrWaits();
        f.clientQp.postSend(send(3, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        f.clientQp.postSend(send(4, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        assertEquals(103, withQpNum(f.serverCq, 1).get(0)[1]);
        assertTrue(drain(f.serverCq, 50).isEmpty(), "the SRQ is empty: the fifth message waits (RNR)");
        assertTrue(f.stack.rnrWaits() > rnrBefore, "RNR counted");
        srq.postReceive(recv(104, dst, 0, 64));
        assertEquals(104, withQpNum(f.serverCq, 1).get(0)[1], "delivered once a receive is posted");
        completions(f.clientCq, 5);
        assertEquals(1, srq.limitEvents());

        assertThrows(RuntimeException.class, srq::close, "EBUSY while a QP uses it");
        f.server.destroyQueuePair();
        srq.close();
        src.deregister();
        dst.deregister();
    }
}
