package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The completion channel contract, poll batches and overflow reporting. */
@Timeout(30)
class LoopbackCompletionQueueTest {
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private void write(long wrId, Registration src, Registration target) {
        f.clientQp.postSend(send(wrId, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED, src, 0, 8)
                .rdma(0, target.address(), target.rkey()));
    }

    @Test
    void awaitReportsOnlyCompletionsAfterArmAndWakeupEndsItEarly() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 8, AccessFlags.LOCAL_WRITE);
        Registration target = register(f.serverPd, 8, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        CompletionQueue cq = f.clientCq;
        assertTrue(cq.supportsEvents());
        // Not armed: a completion raises no event.
        write(1, src, target);
        completions(cq, 1);
        assertFalse(cq.await(20 * MS), "no event without arm()");
        // Armed: the next completion raises one event.
        cq.arm();
        long start = System.nanoTime();
        write(2, src, target);
        assertTrue(cq.await(5_000 * MS), "the completion after arm() raises an event");
        assertTrue(System.nanoTime() - start < 5_000 * MS);
        assertFalse(cq.await(20 * MS), "one event per arm");
        completions(cq, 1);
        // wakeup() from another thread ends a wait; one made before await makes the next return at once.
        cq.wakeup();
        start = System.nanoTime();
        assertFalse(cq.await(5_000 * MS));
        assertTrue(System.nanoTime() - start < 4_000 * MS, "a pending wake-up returns at once, not after 5 s");
        cq.arm();
        Thread waker = new Thread(() -> {
            try {
                Thread.sleep(30);
            } catch (InterruptedException ignored) {
            }
            cq.wakeup();
        });
        waker.start();
        start = System.nanoTime();
        assertFalse(cq.await(5_000 * MS), "woken, not an event");
        assertTrue(System.nanoTime() - start < 4_000 * MS);
        // Still armed: a completion now raises the event.
        write(3, src, target);
        assertTrue(cq.await(5_000 * MS));
        completions(cq, 1);
    }

    @Test
    void aCqWithoutChannelRefusesArmAndAwait() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        CompletionQueue cq = f.client.device().createCompletionQueue(4, false, 4, "plain");
        assertFalse(cq.supportsEvents());
        assertThrows(IllegalStateException.class, cq::arm);
        assertThrows(IllegalStateException.class, () -> cq.await(MS));
        cq.wakeup(); // harmless
        cq.close();
        cq.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> cq.poll((a, b, c, d, e, g, h) -> { }), "use after close");
    }

    @Test
    void pollHandsAtMostOneBatch() {
        LoopbackStack stack = LoopbackStack.create();
        f = new LoopbackFixture(stack);
        int port = f.listen();
        f.prepareClient(port, new io.reactiverdma.reactive.impl.verbs.QpSpec(16, 16, 64));
        f.request(LoopbackFixture.SPEC, new io.reactiverdma.reactive.impl.verbs.QpSpec(16, 16, 64));
        f.accept(LoopbackFixture.SPEC);
        CompletionQueue small = f.client.device().createCompletionQueue(64, false, 2, "batch-2");
        LoopbackProtectionDomain pd = (LoopbackProtectionDomain) f.clientPd;
        Registration src = register(pd, 8, AccessFlags.LOCAL_WRITE);
        Registration target = register(f.serverPd, 8, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        // A second connection whose QP reports to the small CQ.
        LoopbackFixture g = new LoopbackFixture(stack);
        g.client = g.clientChannel.createId(io.reactiverdma.cm.PortSpace.TCP);
        g.client.resolveAddress(null, new java.net.InetSocketAddress("127.0.0.1", port), 1000);
        LoopbackFixture.next(g.clientChannel, io.reactiverdma.cm.CmEventType.ADDR_RESOLVED);
        g.client.resolveRoute(1000);
        LoopbackFixture.next(g.clientChannel, io.reactiverdma.cm.CmEventType.ROUTE_RESOLVED);
        var qp = g.client.createQueuePair(pd, small, new io.reactiverdma.reactive.impl.verbs.QpSpec(8, 8, 0));
        g.client.connect(LoopbackFixture.SPEC);
        var req = LoopbackFixture.next(f.serverChannel, io.reactiverdma.cm.CmEventType.CONNECT_REQUEST);
        req.id().createQueuePair(f.serverPd, f.serverCq, new io.reactiverdma.reactive.impl.verbs.QpSpec(8, 8, 0));
        req.id().accept(LoopbackFixture.SPEC);
        LoopbackFixture.next(g.clientChannel, io.reactiverdma.cm.CmEventType.ESTABLISHED);
        SendWorkRequests w = new SendWorkRequests(5, 1);
        for (int i = 0; i < 5; i++) {
            w.add(i, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
            w.sge(i, src.address(), 8, src.lkey()).rdma(i, target.address(), target.rkey());
        }
        qp.postSend(w);
        long deadline = System.nanoTime() + 5_000 * MS;
        while (((LoopbackCompletionQueue) small).unpolled() < 5 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(2, small.poll((a, b, c, d, e, g2, h) -> { }));
        assertEquals(2, small.poll((a, b, c, d, e, g2, h) -> { }));
        assertEquals(1, small.poll((a, b, c, d, e, g2, h) -> { }));
        assertEquals(0, small.poll((a, b, c, d, e, g2, h) -> { }));
        assertThrows(RuntimeException.class, small::close, "EBUSY: a QP still uses it");
        g.client.destroyQueuePair();
        small.close();
        req.id().destroyQueuePair();
        g.client.close();
        req.id().close();
        g.clientChannel.close();
        g.serverChannel.close();
    }

    @Test
    void anOverflowIsCountedAndRaisesCqErrNothingIsDropped() {
        LoopbackStack stack = LoopbackStack.create();
        f = new LoopbackFixture(stack);
        int port = f.listen();
        f.client = f.clientChannel.createId(io.reactiverdma.cm.PortSpace.TCP);
        f.client.resolveAddress(null, new java.net.InetSocketAddress("127.0.0.1", port), 1000);
        LoopbackFixture.next(f.clientChannel, io.reactiverdma.cm.CmEventType.ADDR_RESOLVED);
        f.client.resolveRoute(1000);
        LoopbackFixture.next(f.clientChannel, io.reactiverdma.cm.CmEventType.ROUTE_RESOLVED);
        f.clientPd = f.client.device().allocateProtectionDomain();
        f.clientCq = f.client.device().createCompletionQueue(2, false, 8, "tiny");
        f.clientQp = f.client.createQueuePair(f.clientPd, f.clientCq, new io.reactiverdma.reactive.impl.verbs.QpSpec(8, 8, 0));
        io.reactiverdma.verbs.ReceiveWorkRequests rw = new io.reactiverdma.verbs.ReceiveWorkRequests(3, 0);
        for (int i = 0; i < 3; i++) {
            rw.add(i);
        }
        f.clientQp.postReceive(rw);
        f.clientQp.toError(); // three flushes into a CQ of two entries
        long deadline = System.nanoTime() + 5_000 * MS;
        while (stack.cqOverflows() == 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals(1, stack.cqOverflows());
        AsyncEventInfo e = f.client.device().awaitAsyncEvent(5_000 * MS);
        assertNotNull(e);
        assertEquals(AsyncEventType.CQ_ERR, e.type());
        assertSame(f.clientCq, e.cq());
        assertEquals(3, completions(f.clientCq, 3).size(), "kept, not dropped");
        f.client.device().wakeupAsyncEvents();
        assertNull(f.client.device().awaitAsyncEvent(5_000 * MS), "woken: no event");
    }
}
