package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
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

import java.util.List;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.buffer;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.drain;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.recv;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Work requests on a connected loopback QP pair: data movement, keys, bounds, access, errors and flushes. */
@Timeout(30)
class LoopbackVerbsTest {
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
    void registrationsGetDistinctKeysAndDisjointAddresses() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration a = register(f.clientPd, 5000, LW);
        Registration b = register(f.clientPd, 100, LW | AccessFlags.REMOTE_READ);
        assertNotEquals(a.lkey(), a.rkey());
        assertNotEquals(a.lkey(), b.lkey());
        assertNotEquals(a.rkey(), b.rkey());
        assertTrue(a.address() + 5000 <= b.address() || b.address() + 100 <= a.address(), "disjoint ranges");
        assertEquals(2, f.stack.resources().count(LoopbackResources.Kind.REGISTRATION));
        assertEquals(5100, f.stack.resources().registeredBytes());
        assertThrows(RuntimeException.class, () -> register(f.clientPd, 8, AccessFlags.REMOTE_WRITE),
                "REMOTE_WRITE without LOCAL_WRITE is EINVAL");
        a.deregister();
        a.deregister(); // idempotent
        b.deregister();
        assertEquals(0, f.stack.resources().registeredBytes());
    }

    @Test
    void sendWithImmediateLandsInTheOldestReceive() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 128, LW);
        buffer(src).put(0, "hello".getBytes());
        f.serverQp.postReceive(recv(1, dst, 0, 64));
        f.serverQp.postReceive(recv(2, dst, 64, 64));
        SendWorkRequests w = send(10, WrOpcode.SEND_WITH_IMM, SendFlags.SIGNALED, src, 0, 5).immData(0, 0xCAFEBABE);
        f.clientQp.postSend(w);
        Completion rc = completions(f.serverCq, 1).get(0);
        assertCompletion(rc, 1, WcStatus.SUCCESS, WcOpcode.RECV);
        assertEquals(5, rc.byteLen());
        assertEquals(WcFlags.WITH_IMM, rc.wcFlags() & WcFlags.WITH_IMM);
        assertEquals(0xCAFEBABE, rc.immData());
        byte[] got = new byte[5];
        buffer(dst).get(0, got);
        assertEquals("hello", new String(got));
        Completion sc = completions(f.clientCq, 1).get(0);
        assertCompletion(sc, 10, WcStatus.SUCCESS, WcOpcode.SEND);
        assertEquals(5, sc.byteLen());
        f.clientQp.postSend(send(11, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 3));
        Completion rc2 = completions(f.serverCq, 1).get(0);
        assertCompletion(rc2, 2, WcStatus.SUCCESS, WcOpcode.RECV);
        assertEquals(0, rc2.wcFlags() & WcFlags.WITH_IMM, "a plain SEND carries no immediate");
        assertCompletion(completions(f.clientCq, 1).get(0), 11, WcStatus.SUCCESS, WcOpcode.SEND);
    }

    @Test
    void unsignaledSuccessGivesNoCompletion() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 8, LW);
        Registration dst = register(f.serverPd, 8, LW);
        f.serverQp.postReceive(recv(1, dst, 0, 8));
        f.clientQp.postSend(send(10, WrOpcode.SEND, 0, src, 0, 8));
        completions(f.serverCq, 1);
        assertEquals(0, drain(f.clientCq, 30).size());
        f.stack.resources().awaitReleased(java.time.Duration.ofSeconds(5), LoopbackResources.Kind.CM_CHANNEL,
                LoopbackResources.Kind.CM_ID, LoopbackResources.Kind.QUEUE_PAIR, LoopbackResources.Kind.COMPLETION_QUEUE,
                LoopbackResources.Kind.PROTECTION_DOMAIN, LoopbackResources.Kind.REGISTRATION);
    }

    @Test
    void sendLongerThanTheReceiveBufferFailsBothSidesAndFlushesTheRestInOrder() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 64, LW);
        f.serverQp.postReceive(recv(1, dst, 0, 16));
        f.serverQp.postReceive(recv(2, dst, 16, 16));
        SendWorkRequests w = new SendWorkRequests(4, 1);
        for (int i = 0; i < 3; i++) {
            w.add(20 + i, WrOpcode.SEND, SendFlags.SIGNALED);
            w.sge(i, src.address(), 32, src.lkey());
        }
        f.clientQp.postSend(w);
        List<Completion> s = completions(f.clientCq, 3);
        assertCompletion(s.get(0), 20, WcStatus.REM_INV_REQ_ERR, WcOpcode.SEND);
        assertCompletion(s.get(1), 21, WcStatus.WR_FLUSH_ERR, null);
        assertCompletion(s.get(2), 22, WcStatus.WR_FLUSH_ERR, null);
        List<Completion> r = completions(f.serverCq, 2);
        assertCompletion(r.get(0), 1, WcStatus.LOC_LEN_ERR, WcOpcode.RECV);
        assertCompletion(r.get(1), 2, WcStatus.WR_FLUSH_ERR, null);
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.clientQp).state());
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.serverQp).state());
        // Posting in ERR is accepted and flushes.
        f.clientQp.postSend(send(30, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 1));
        assertCompletion(completions(f.clientCq, 1).get(0), 30, WcStatus.WR_FLUSH_ERR, null);
    }

    @Test
    void aReceiveBufferWithoutLocalWriteFailsAtTheReceiverAndTheSender() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 8, LW);
        Registration readOnly = register(f.serverPd, 8, AccessFlags.REMOTE_READ);
        f.serverQp.postReceive(recv(1, readOnly, 0, 8));
        f.clientQp.postSend(send(2, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        assertCompletion(completions(f.serverCq, 1).get(0), 1, WcStatus.LOC_PROT_ERR, WcOpcode.RECV);
        assertCompletion(completions(f.clientCq, 1).get(0), 2, WcStatus.REM_OP_ERR, WcOpcode.SEND);
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.serverQp).state());
    }

    @Test
    void anUnansweredRequestIsRetriedRetryCountTimesThenFails() {
        ConnectSpec threeRetries = new ConnectSpec(4, 4, 3, 3, null);
        f = LoopbackFixture.connected(LoopbackStack.builder().device("lo", "127.0.0.1")
                .ackTimeout(java.time.Duration.ofMillis(10)).build(), threeRetries, threeRetries, new QpSpec(8, 8, 64));
        Registration src = register(f.clientPd, 8, LW);
        Registration target = register(f.serverPd, 8, LW | AccessFlags.REMOTE_WRITE);
        f.server.destroyQueuePair(); // packets to a QP that no longer exists are dropped
        long start = System.nanoTime();
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8)
                .rdma(0, target.address(), target.rkey()));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.RETRY_EXC_ERR, WcOpcode.RDMA_WRITE);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertTrue(tookMs >= 30, "three retries 10 ms apart, took " + tookMs + " ms");
    }

    @Test
    void aBadLkeyIsALocalProtectionError() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration other = register(f.serverPd, 64, LW); // another PD: its lkey is not valid on the client QP
        Registration dst = register(f.serverPd, 64, LW);
        f.serverQp.postReceive(recv(1, dst, 0, 64));
        SendWorkRequests w = new SendWorkRequests(4, 1);
        w.add(1, WrOpcode.SEND, SendFlags.SIGNALED);
        w.sge(0, other.address(), 8, other.lkey());
        f.clientQp.postSend(w);
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.LOC_PROT_ERR, null);
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.clientQp).state());
        assertEquals(0, drain(f.serverCq, 20).size(), "the receiver saw nothing");
    }

    @Test
    void outOfRangeSgeIsALocalProtectionError() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 256, LW);
        f.serverQp.postReceive(recv(1, dst, 0, 256));
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 60, 8));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.LOC_PROT_ERR, null);
    }

    @Test
    void inlineCopiesAtPostTimeAndNonInlineReadsWhenExecuted() {
        LoopbackStack stack = LoopbackStack.create();
        f = new LoopbackFixture(stack);
        f.prepareClient(f.listen(), new QpSpec(8, 8, 64));
        Registration src = register(f.clientPd, 64, LW);
        buffer(src).put(0, (byte) 1).put(8, (byte) 1);
        // Posted before the connection exists: accepted, executed once connected.
        SendWorkRequests w = new SendWorkRequests(2, 1);
        w.add(1, WrOpcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE);
        w.sge(0, src.address(), 1, src.lkey());
        w.add(2, WrOpcode.SEND, SendFlags.SIGNALED);
        w.sge(1, src.address() + 8, 1, src.lkey());
        f.clientQp.postSend(w);
        buffer(src).put(0, (byte) 2).put(8, (byte) 2); // reused right after the post
        f.request(LoopbackFixture.SPEC, new QpSpec(8, 8, 64));
        Registration dst = register(f.serverPd, 64, LW);
        f.serverQp.postReceive(recv(11, dst, 0, 8));
        f.serverQp.postReceive(recv(12, dst, 8, 8));
        assertEquals(0, drain(f.clientCq, 20).size(), "nothing executes before the connection is established");
        f.accept(LoopbackFixture.SPEC);
        completions(f.serverCq, 2);
        assertEquals(1, buffer(dst).get(0), "inline: the bytes at post time");
        assertEquals(2, buffer(dst).get(8), "not inline: the bytes when executed");
        completions(f.clientCq, 2);
    }

    @Test
    void inlineAboveTheGrantedMaximumIsRefused() {
        f = LoopbackFixture.connected(LoopbackStack.create(), LoopbackFixture.SPEC, LoopbackFixture.SPEC,
                new QpSpec(8, 8, 1000));
        assertEquals(256, f.clientQp.maxInlineData(), "granted min(asked, 256)");
        Registration src = register(f.clientPd, 512, LW);
        Registration dst = register(f.serverPd, 512, LW);
        f.serverQp.postReceive(recv(1, dst, 0, 512));
        SendWorkRequests w = new SendWorkRequests(2, 1);
        w.add(1, WrOpcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE);
        w.sge(0, src.address(), 256, src.lkey());
        w.add(2, WrOpcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE);
        w.sge(1, src.address(), 257, src.lkey());
        PostRefusedException e = assertThrows(PostRefusedException.class, () -> f.clientQp.postSend(w));
        assertEquals(Errnos.EINVAL, e.errno());
        assertEquals(1, e.failedIndex());
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.SEND);
    }

    @Test
    void postingBeyondTheQueueDepthIsRefusedWithEnomemAtTheFirstExtraRequest() {
        f = LoopbackFixture.connected(LoopbackStack.create(), LoopbackFixture.SPEC, LoopbackFixture.SPEC,
                new QpSpec(3, 2, 64));
        f.stack.faults().hang(f.client.device()); // completions held: nothing leaves the queues early
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 64, LW);
        io.reactiverdma.verbs.ReceiveWorkRequests rw = new io.reactiverdma.verbs.ReceiveWorkRequests(3, 1);
        for (int i = 0; i < 3; i++) {
            rw.add(100 + i, dst.address(), 8, dst.lkey());
        }
        PostRefusedException re = assertThrows(PostRefusedException.class, () -> f.serverQp.postReceive(rw));
        assertEquals(Errnos.ENOMEM, re.errno());
        assertEquals(2, re.failedIndex());
        // RDMA READs stay outstanding while the client's device hangs.
        Registration source = register(f.serverPd, 64, AccessFlags.REMOTE_READ);
        SendWorkRequests w = new SendWorkRequests(4, 1);
        for (int i = 0; i < 4; i++) {
            w.add(i, WrOpcode.RDMA_READ, SendFlags.SIGNALED);
            w.sge(i, src.address(), 8, src.lkey()).rdma(i, source.address(), source.rkey());
        }
        f.clientQp.postSend(new SendWorkRequests(1, 1)); // an empty chain posts nothing
        PostRefusedException se = assertThrows(PostRefusedException.class, () -> f.clientQp.postSend(w));
        assertEquals(Errnos.ENOMEM, se.errno());
        assertEquals(3, se.failedIndex());
        f.stack.faults().resume(f.client.device());
        List<Completion> c = completions(f.clientCq, 3);
        for (int i = 0; i < 3; i++) {
            assertCompletion(c.get(i), i, WcStatus.SUCCESS, WcOpcode.RDMA_READ);
        }
    }

    @Test
    void rnrRetriesThenFailsWithRnrRetryExceeded() {
        ConnectSpec twoRetries = new ConnectSpec(4, 4, 3, 2, null);
        f = LoopbackFixture.connected(LoopbackStack.builder().device("lo", "127.0.0.1")
                .rnrDelay(java.time.Duration.ofMillis(5)).build(), twoRetries, twoRetries, new QpSpec(8, 8, 64));
        Registration src = register(f.clientPd, 8, LW);
        long start = System.nanoTime();
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        f.clientQp.postSend(send(2, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        List<Completion> c = completions(f.clientCq, 2);
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertCompletion(c.get(0), 1, WcStatus.RNR_RETRY_EXC_ERR, WcOpcode.SEND);
        assertCompletion(c.get(1), 2, WcStatus.WR_FLUSH_ERR, null);
        assertTrue(tookMs >= 10, "two retries 5 ms apart before giving up, took " + tookMs + " ms");
        assertEquals(LoopbackQueuePair.State.RTS, ((LoopbackQueuePair) f.serverQp).state(),
                "the receiver's QP is untouched by the sender's RNR failure (like hardware)");
    }

    @Test
    void aSendWaitsForAReceiveWhileRnrRetriesLast() {
        ConnectSpec forever = new ConnectSpec(4, 4, 3, 7, null);
        f = LoopbackFixture.connected(LoopbackStack.create(), forever, forever, new QpSpec(8, 8, 64));
        Registration src = register(f.clientPd, 8, LW);
        Registration dst = register(f.serverPd, 8, LW);
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        assertEquals(0, drain(f.clientCq, 50).size(), "stalled on RNR");
        f.serverQp.postReceive(recv(9, dst, 0, 8));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.SEND);
        assertCompletion(completions(f.serverCq, 1).get(0), 9, WcStatus.SUCCESS, WcOpcode.RECV);
    }

    @Test
    void toErrorFlushesEverythingInOrderAndDestroyStopsAll() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration dst = register(f.serverPd, 64, LW);
        io.reactiverdma.verbs.ReceiveWorkRequests rw = new io.reactiverdma.verbs.ReceiveWorkRequests(4, 1);
        for (int i = 0; i < 4; i++) {
            rw.add(i, dst.address(), 8, dst.lkey());
        }
        f.serverQp.postReceive(rw);
        f.serverQp.toError();
        List<Completion> c = completions(f.serverCq, 4);
        for (int i = 0; i < 4; i++) {
            assertCompletion(c.get(i), i, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV);
        }
        f.server.destroyQueuePair();
        f.server.destroyQueuePair(); // idempotent
        assertThrows(PostRefusedException.class, () -> f.serverQp.postReceive(rw), "use after destroy");
        assertThrows(IllegalStateException.class, () -> f.serverQp.toError());
    }

    @Test
    void sendsToADestroyedQpEndInRetryExceeded() {
        ConnectSpec oneRetry = new ConnectSpec(4, 4, 1, 3, null);
        f = LoopbackFixture.connected(LoopbackStack.create(), oneRetry, oneRetry, new QpSpec(8, 8, 64));
        Registration src = register(f.clientPd, 8, LW);
        f.server.destroyQueuePair();
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.RETRY_EXC_ERR, null);
        assertEquals(0, f.stack.resources().count(LoopbackResources.Kind.OUTSTANDING_WR));
    }

    @Test
    void completionsAreGeneratedOffTheCallersThreadAndAHungDeviceHoldsThem() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 8, LW);
        Registration target = register(f.serverPd, 8, LW | AccessFlags.REMOTE_WRITE);
        f.stack.faults().hang(f.client.device());
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8)
                .rdma(0, target.address(), target.rkey()));
        assertEquals(0, drain(f.clientCq, 50).size(), "a hung device generates no completion");
        assertEquals(1, f.stack.resources().count(LoopbackResources.Kind.OUTSTANDING_WR));
        assertEquals(1, ((LoopbackQueuePair) f.clientQp).outstandingSends());
        f.stack.faults().resume(f.client.device());
        assertCompletion(completions(f.clientCq, 1).get(0), 1, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
        f.client.disconnect();
        LoopbackFixture.next(f.serverChannel, CmEventType.DISCONNECTED);
    }
}
