package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.buffer;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.recv;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The zero-cost loopback device at the verbs boundary ({@link LoopbackStack#zeroCost()}): a post completes
 * inside the call, on the posting thread, and allocates nothing. The test thread polls both CQs, so it is
 * the poller of both ends, as one engine poller is in the benchmarks.
 */
@Timeout(60)
class ZeroCostQueuePairTest {
    private static final int LW = AccessFlags.LOCAL_WRITE;
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private LoopbackFixture connectedAndOwned() {
        f = LoopbackFixture.connected(LoopbackStack.zeroCost());
        pollNow(f.clientCq);
        pollNow(f.serverCq); // this thread is now the poller of both
        return f;
    }

    private static List<Completion> pollNow(io.reactiverdma.reactive.impl.verbs.CompletionQueue cq) {
        List<Completion> got = new ArrayList<>();
        while (cq.poll((w, s, o, v, b, i, fl) -> got.add(new Completion(w, s, o, v, b, i, fl))) > 0) {
            // all of them: the zero-cost device has written them already
        }
        return got;
    }

    @Test
    void aSendCompletesInsideThePostWithTheBytesInThePeersReceive() {
        connectedAndOwned();
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 64, LW);
        for (int i = 0; i < 16; i++) {
            buffer(src).put(i, (byte) (i + 1));
        }
        f.serverQp.postReceive(recv(7, dst, 8, 32));
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 16));
        List<Completion> server = pollNow(f.serverCq);
        List<Completion> client = pollNow(f.clientCq);
        assertEquals(1, server.size(), "the receive completed within the post: " + server);
        assertEquals(7, server.get(0).wrId());
        assertEquals(WcStatus.SUCCESS.value(), server.get(0).status());
        assertEquals(WcOpcode.RECV.value(), server.get(0).opcode());
        assertEquals(16, server.get(0).byteLen());
        assertEquals(1, client.size(), "the send completed within the post: " + client);
        assertEquals(WcStatus.SUCCESS.value(), client.get(0).status());
        for (int i = 0; i < 16; i++) {
            assertEquals(i + 1, buffer(dst).get(8 + i), "byte " + i);
        }
        assertEquals(0, ((LoopbackQueuePair) f.serverQp).postedReceives());
    }

    @Test
    void writeAndReadMoveTheBytesAndAWrongRkeyFailsWithRemoteAccessErrorAndFlushes() {
        connectedAndOwned();
        Registration local = register(f.clientPd, 64, LW);
        Registration remote = register(f.serverPd, 64, LW | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        buffer(local).putLong(0, 0x1122334455667788L);
        f.clientQp.postSend(send(1, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, local, 0, 8)
                .rdma(0, remote.address() + 16, remote.rkey()));
        assertEquals(0x1122334455667788L, buffer(remote).getLong(16), "written within the post");
        buffer(remote).putLong(32, 42L);
        f.clientQp.postSend(send(2, WrOpcode.RDMA_READ, SendFlags.SIGNALED, local, 40, 8)
                .rdma(0, remote.address() + 32, remote.rkey()));
        assertEquals(42L, buffer(local).getLong(40), "read within the post");
        List<Completion> done = pollNow(f.clientCq);
        assertEquals(2, done.size(), "" + done);
        assertEquals(WcStatus.SUCCESS.value(), done.get(1).status());
        assertEquals(8, done.get(1).byteLen());

        f.clientQp.postReceive(recv(9, local, 0, 8));
        f.clientQp.postSend(send(3, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, local, 0, 8)
                .rdma(0, remote.address(), remote.rkey() + 0x100));
        List<Completion> failed = pollNow(f.clientCq);
        assertEquals(2, failed.size(), "the failed write, then its QP's receive flushed: " + failed);
        assertEquals(WcStatus.REM_ACCESS_ERR.value(), failed.get(0).status());
        assertEquals(9, failed.get(1).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR.value(), failed.get(1).status());
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.serverQp).state(),
                "a remote access error moves the responder to ERR too");
    }

    @Test
    void aBatchOfPostsAndPollsAllocatesNothing() {
        connectedAndOwned();
        Registration src = register(f.clientPd, 64, LW);
        Registration dst = register(f.serverPd, 64 * 16, LW);
        SendWorkRequests sends = send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 64);
        SendWorkRequests inline = send(2, WrOpcode.SEND, SendFlags.SIGNALED | SendFlags.INLINE, src, 0, 64);
        ReceiveWorkRequests receives = new ReceiveWorkRequests(1, 1);
        receives.add(5, dst.address(), 64, dst.lkey());
        io.reactiverdma.reactive.impl.verbs.CompletionQueue.Handler count = (w, s, o, v, b, i, fl) -> { };
        Runnable round = () -> {
            f.serverQp.postReceive(receives);
            f.clientQp.postSend(sends);
            f.serverQp.postReceive(receives);
            f.clientQp.postSend(inline);
            while (f.serverCq.poll(count) > 0 || f.clientCq.poll(count) > 0) {
                // drained
            }
        };
        for (int i = 0; i < 20_000; i++) {
            round.run(); // compiled before it is measured
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        int rounds = 10_000;
        for (int i = 0; i < rounds; i++) {
            round.run();
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        // getThreadAllocatedBytes itself may allocate a little once; 40,000 posts at even 8 B each would be 320,000
        assertTrue(allocated < 1024, allocated + " bytes allocated by " + rounds * 4 + " posts and their polls");
        assertEquals(2L * (rounds + 20_000), ((LoopbackQueuePair) f.clientQp).signalledSendCompletions());
    }

    @Test
    void aPostFromAThreadThatDoesNotPollBothEndsIsRefused() throws Exception {
        connectedAndOwned();
        Registration src = register(f.clientPd, 64, LW);
        CompletableFuture<Void> other = CompletableFuture.runAsync(() ->
                f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8)));
        ExecutionException e = assertThrows(ExecutionException.class, () -> other.get(30, TimeUnit.SECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("both connection ends must be on one poller"),
                e.getCause().getMessage());
    }
}
