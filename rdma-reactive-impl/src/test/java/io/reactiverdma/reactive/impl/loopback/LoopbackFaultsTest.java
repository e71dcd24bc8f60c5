package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Call;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.AsyncEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.PostRefusedException;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.completions;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.drain;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.next;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.register;
import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.send;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every kind of injected fault does what it says. */
@Timeout(30)
class LoopbackFaultsTest {
    private static final QpSpec QP = new QpSpec(8, 8, 64);
    private static final long SEC = TimeUnit.SECONDS.toNanos(1);
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    @Test
    void cqCallsFailTheGivenNumberOfTimes() {
        LoopbackStack stack = LoopbackStack.create();
        IllegalStateException boom = new IllegalStateException("boom");
        stack.faults().failCqCalls(null, Call.POLL, 2, boom); // the next CQ created: the client's
        f = LoopbackFixture.connected(stack);
        CompletionQueue cq = f.clientCq;
        assertSame(boom, assertThrows(IllegalStateException.class, () -> cq.poll((a, b, c, d, e, g, h) -> { })));
        assertSame(boom, assertThrows(IllegalStateException.class, () -> cq.poll((a, b, c, d, e, g, h) -> { })));
        assertEquals(0, cq.poll((a, b, c, d, e, g, h) -> { }), "third call works");
        f.serverCq.poll((a, b, c, d, e, g, h) -> { }); // the server's CQ was never affected
        OutOfMemoryError error = new OutOfMemoryError("injected");
        stack.faults().failCqCalls(f.serverCq, Call.AWAIT, 1, error);
        assertSame(error, assertThrows(OutOfMemoryError.class, () -> f.serverCq.await(1)));
        assertEquals(false, f.serverCq.await(1));
    }

    @Test
    void aPostIsRefusedAtTheChosenIndexAndTheEarlierRequestsComplete() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration dst = register(f.serverPd, 64, AccessFlags.LOCAL_WRITE);
        f.stack.faults().refuseNextPost(LoopbackFaults.Post.RECEIVE, f.serverQp, 2, Errnos.ENOMEM);
        ReceiveWorkRequests rw = new ReceiveWorkRequests(4, 1);
        for (int i = 0; i < 4; i++) {
            rw.add(i, dst.address() + 8 * i, 8, dst.lkey());
        }
        PostRefusedException e = assertThrows(PostRefusedException.class, () -> f.serverQp.postReceive(rw));
        assertEquals(2, e.failedIndex());
        assertEquals(Errnos.ENOMEM, e.errno());
        assertEquals(2, ((LoopbackQueuePair) f.serverQp).postedReceives());
        f.serverQp.toError();
        List<Completion> c = completions(f.serverCq, 2);
        assertEquals(0, c.get(0).wrId());
        assertEquals(1, c.get(1).wrId());
        assertEquals(0, drain(f.serverCq, 20).size());
    }

    @Test
    void theNextMatchingCompletionGetsTheInjectedStatus() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration src = register(f.clientPd, 8, AccessFlags.LOCAL_WRITE);
        Registration target = register(f.serverPd, 8, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        f.stack.faults().failNextCompletion(null, WrOpcode.RDMA_READ, WcStatus.REM_OP_ERR); // not a WRITE
        f.stack.faults().failNextCompletion(f.clientQp, WrOpcode.RDMA_WRITE, WcStatus.GENERAL_ERR);
        SendWorkRequests w = new SendWorkRequests(2, 1);
        for (int i = 0; i < 2; i++) {
            w.add(i, WrOpcode.RDMA_WRITE, SendFlags.SIGNALED);
            w.sge(i, src.address(), 8, src.lkey()).rdma(i, target.address(), target.rkey());
        }
        f.clientQp.postSend(w);
        List<Completion> c = completions(f.clientCq, 2);
        assertEquals(WcStatus.GENERAL_ERR.value(), c.get(0).status());
        assertEquals(WcStatus.WR_FLUSH_ERR.value(), c.get(1).status());
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.clientQp).state());
    }

    @Test
    void injectedAsyncEventsAreReadAndQpErrorsMoveTheQpToErr() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        LoopbackFaults faults = f.stack.faults();
        var device = f.client.device();
        faults.raiseQpEvent(f.clientQp, AsyncEventType.QP_FATAL);
        faults.raiseCqEvent(f.clientCq);
        faults.raisePortEvent(device, AsyncEventType.PORT_ERR, 1);
        faults.raiseDeviceFatal(device);
        AsyncEventInfo qp = device.awaitAsyncEvent(SEC);
        assertEquals(AsyncEventType.QP_FATAL, qp.type());
        assertEquals(f.clientQp.qpNum(), qp.qpNum());
        AsyncEventInfo cq = device.awaitAsyncEvent(SEC);
        assertEquals(AsyncEventType.CQ_ERR, cq.type());
        assertSame(f.clientCq, cq.cq());
        AsyncEventInfo port = device.awaitAsyncEvent(SEC);
        assertEquals(AsyncEventType.PORT_ERR, port.type());
        assertEquals(1, port.port());
        assertEquals(AsyncEventType.DEVICE_FATAL, device.awaitAsyncEvent(SEC).type());
        assertNull(device.awaitAsyncEvent(TimeUnit.MILLISECONDS.toNanos(10)));
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.clientQp).state());
    }

    @Test
    void connectAttemptsFailAtTheChosenStep() {
        LoopbackStack stack = LoopbackStack.create();
        f = new LoopbackFixture(stack);
        int port = f.listen();
        stack.faults().failNextConnect(CmEventType.ADDR_ERROR, -110);
        var id = f.clientChannel.createId(io.reactiverdma.cm.PortSpace.TCP);
        id.resolveAddress(null, new java.net.InetSocketAddress("127.0.0.1", port), 100);
        assertEquals(-110, next(f.clientChannel, CmEventType.ADDR_ERROR).status());
        id.close();
        stack.faults().failNextConnect(CmEventType.ROUTE_ERROR, -113);
        var id2 = f.clientChannel.createId(io.reactiverdma.cm.PortSpace.TCP);
        id2.resolveAddress(null, new java.net.InetSocketAddress("127.0.0.1", port), 100);
        next(f.clientChannel, CmEventType.ADDR_RESOLVED);
        id2.resolveRoute(100);
        assertEquals(-113, next(f.clientChannel, CmEventType.ROUTE_ERROR).status());
        id2.close();
        for (CmEventType t : new CmEventType[] {CmEventType.UNREACHABLE, CmEventType.CONNECT_ERROR,
                CmEventType.REJECTED}) {
            stack.faults().failNextConnect(t, -110);
            f.prepareClient(port, QP);
            f.client.connect(LoopbackFixture.SPEC);
            assertEquals(-110, next(f.clientChannel, t).status());
            assertNull(LoopbackFixture.next(f.serverChannel, 20_000_000L), "the server saw nothing");
            f.client.destroyQueuePair();
            f.client.close();
        }
        f.client = null;
    }

    @Test
    void aDelayedEstablishedArrivesLate() {
        LoopbackStack stack = LoopbackStack.create();
        f = new LoopbackFixture(stack);
        f.prepareClient(f.listen(), QP);
        f.request(LoopbackFixture.SPEC, QP);
        stack.faults().delayEvents(CmEventType.ESTABLISHED, Duration.ofMillis(150), 1);
        long start = System.nanoTime();
        f.server.accept(LoopbackFixture.SPEC);
        next(f.serverChannel, CmEventType.ESTABLISHED);
        next(f.clientChannel, CmEventType.ESTABLISHED);
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(150), "one of them was delayed");
    }

    @Test
    void aDeadHostAnswersNothingAndItsPeerSeesRetryExceededWithoutDisconnect() {
        ConnectSpec twoRetries = new ConnectSpec(4, 4, 2, 3, null);
        f = LoopbackFixture.connected(LoopbackStack.create(), twoRetries, twoRetries, QP);
        Registration src = register(f.clientPd, 8, AccessFlags.LOCAL_WRITE);
        Registration dst = register(f.serverPd, 8, AccessFlags.LOCAL_WRITE);
        f.serverQp.postReceive(LoopbackFixture.recv(1, dst, 0, 8));
        f.stack.faults().dropHost(f.server);
        f.clientQp.postSend(send(1, WrOpcode.SEND, SendFlags.SIGNALED, src, 0, 8));
        assertEquals(WcStatus.RETRY_EXC_ERR.value(), completions(f.clientCq, 1).get(0).status());
        f.client.disconnect();
        next(f.clientChannel, CmEventType.DISCONNECTED);
        assertNull(LoopbackFixture.next(f.serverChannel, 30_000_000L), "the dead host hears nothing");
        assertEquals(0, drain(f.serverCq, 20).size(), "and completes nothing");
    }

    @Test
    void disconnectAndDeviceRemovalCanBeDeliveredAtAnyMoment() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        f.stack.faults().disconnect(f.server);
        next(f.clientChannel, CmEventType.DISCONNECTED);
        next(f.serverChannel, CmEventType.DISCONNECTED);
        f.stack.faults().removeDevice(f.client.device());
        CmEventInfo a = LoopbackFixture.next(f.clientChannel, CmEventType.DEVICE_REMOVAL);
        assertNotNull(a);
        // The listener and the server's id are on the same device: both hear it on the server channel.
        next(f.serverChannel, CmEventType.DEVICE_REMOVAL);
        next(f.serverChannel, CmEventType.DEVICE_REMOVAL);
    }
}
