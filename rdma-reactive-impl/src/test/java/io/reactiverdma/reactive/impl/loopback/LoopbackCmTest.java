package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.WcStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import static io.reactiverdma.reactive.impl.loopback.LoopbackFixture.next;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** rdma_cm sequences: connect, accept, reject, no listener, unknown address, disconnect, misuse. */
@Timeout(30)
class LoopbackCmTest {
    private static final QpSpec QP = new QpSpec(8, 8, 64);
    private LoopbackFixture f;

    @AfterEach
    void close() {
        if (f != null) {
            f.close();
        }
    }

    private static ConnectSpec spec(byte[] privateData) {
        return new ConnectSpec(4, 4, 3, 3, privateData);
    }

    @Test
    void connectAcceptCarriesPaddedPrivateDataOnSeparateChannels() {
        f = new LoopbackFixture(LoopbackStack.create());
        int port = f.listen();
        f.prepareClient(port, QP);
        assertEquals("127.0.0.1", f.client.localAddress().getAddress().getHostAddress());
        assertEquals(port, f.client.peerAddress().getPort());
        CmEventInfo req = f.request(spec(new byte[] {1, 2, 3}), QP);
        assertSame(f.listener, req.listenId());
        assertNotSame(f.listener, req.id());
        assertEquals(56, req.privateData().length, "REQ private data padded to 56 bytes");
        assertArrayEquals(new byte[] {1, 2, 3}, req.privateDataTrimmed());
        assertEquals(f.client.localAddress(), req.id().peerAddress());
        assertSame(f.client.device(), req.id().device());
        f.server.accept(spec(new byte[] {9, 8}));
        CmEventInfo serverUp = next(f.serverChannel, CmEventType.ESTABLISHED);
        assertSame(f.server, serverUp.id());
        CmEventInfo clientUp = next(f.clientChannel, CmEventType.ESTABLISHED);
        assertSame(f.client, clientUp.id());
        assertEquals(196, clientUp.privateData().length, "REP private data padded to 196 bytes");
        assertArrayEquals(new byte[] {9, 8}, clientUp.privateDataTrimmed());
        assertEquals(LoopbackQueuePair.State.RTS, ((LoopbackQueuePair) f.clientQp).state());
        assertEquals(LoopbackQueuePair.State.RTS, ((LoopbackQueuePair) f.serverQp).state());
    }

    @Test
    void nobodyListeningIsRejectedWithStatus8() {
        f = new LoopbackFixture(LoopbackStack.create());
        f.prepareClient(4242, QP);
        f.client.connect(spec(null));
        CmEventInfo e = next(f.clientChannel, CmEventType.REJECTED);
        assertEquals(8, e.status());
    }

    @Test
    void rejectGivesStatus28WithThePrivateData() {
        f = new LoopbackFixture(LoopbackStack.create());
        f.prepareClient(f.listen(), QP);
        f.request(spec(null), QP);
        f.server.reject(new byte[] {7, 7});
        CmEventInfo e = next(f.clientChannel, CmEventType.REJECTED);
        assertEquals(28, e.status());
        assertArrayEquals(new byte[] {7, 7}, e.privateDataTrimmed());
        NativeCallException late = assertThrows(NativeCallException.class, () -> f.server.accept(spec(null)));
        assertTrue(late.getMessage().startsWith("rdma_accept"), late.getMessage());
    }

    @Test
    void closingAnUnansweredRequestRejectsIt() {
        f = new LoopbackFixture(LoopbackStack.create());
        f.prepareClient(f.listen(), QP);
        f.request(spec(null), QP);
        f.server.destroyQueuePair();
        f.server.close();
        assertEquals(28, next(f.clientChannel, CmEventType.REJECTED).status());
    }

    @Test
    void anUnknownAddressIsAnAddressError() {
        f = new LoopbackFixture(LoopbackStack.create());
        CmId id = f.clientChannel.createId(PortSpace.TCP);
        id.resolveAddress(null, new InetSocketAddress("10.99.0.1", 7471), 100);
        CmEventInfo e = next(f.clientChannel, CmEventType.ADDR_ERROR);
        assertTrue(e.status() < 0, "a negative errno: " + e.status());
        assertThrows(IllegalStateException.class, id::device);
        id.close();
    }

    @Test
    void privateDataLimitsAreEnforced() {
        f = new LoopbackFixture(LoopbackStack.create());
        f.prepareClient(f.listen(), QP);
        NativeCallException tooLong = assertThrows(NativeCallException.class, () -> f.client.connect(spec(new byte[57])));
        assertEquals(Errnos.EINVAL, tooLong.errno());
        assertTrue(tooLong.getMessage().startsWith("rdma_connect"), tooLong.getMessage());
        f.request(spec(new byte[56]), QP);
        NativeCallException acceptTooLong = assertThrows(NativeCallException.class,
                () -> f.server.accept(spec(new byte[197])));
        assertEquals(Errnos.EINVAL, acceptTooLong.errno());
        f.accept(spec(new byte[196]));
    }

    @Test
    void bindPicksAFreePortAndRefusesATakenOne() {
        f = new LoopbackFixture(LoopbackStack.create());
        int port = f.listen();
        assertTrue(port > 0);
        CmId other = f.serverChannel.createId(PortSpace.TCP);
        NativeCallException taken = assertThrows(NativeCallException.class,
                () -> other.bind(new InetSocketAddress("0.0.0.0", port)));
        assertEquals(Errnos.EADDRINUSE, taken.errno());
        other.bind(new InetSocketAddress("10.77.0.1", 0));
        assertEquals("10.77.0.1", other.localAddress().getAddress().getHostAddress());
        CmId third = f.serverChannel.createId(PortSpace.TCP);
        assertThrows(NativeCallException.class, () -> third.bind(new InetSocketAddress("192.0.2.1", 0)));
        other.close();
        third.close();
        f.listener.close();
        f.listener = null;
        CmId again = f.serverChannel.createId(PortSpace.TCP);
        again.bind(new InetSocketAddress("127.0.0.1", port)); // free again after close
        again.close();
    }

    @Test
    void disconnectFlushesBothQpsAndTellsBothSides() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        Registration dst = LoopbackFixture.register(f.serverPd, 8, AccessFlags.LOCAL_WRITE);
        f.serverQp.postReceive(LoopbackFixture.recv(5, dst, 0, 8));
        f.client.disconnect();
        next(f.clientChannel, CmEventType.DISCONNECTED);
        next(f.serverChannel, CmEventType.DISCONNECTED);
        List<Completion> c = LoopbackFixture.completions(f.serverCq, 1);
        assertEquals(WcStatus.WR_FLUSH_ERR.value(), c.get(0).status());
        f.server.disconnect(); // after the peer's: harmless, like rdma_cm answering a DREQ
        assertNull(LoopbackFixture.next(f.serverChannel, 30_000_000L), "no second DISCONNECTED");
    }

    @Test
    void closingAConnectedIdDisconnectsThePeer() {
        f = LoopbackFixture.connected(LoopbackStack.create());
        f.client.destroyQueuePair();
        f.client.close();
        f.client.close(); // idempotent
        next(f.serverChannel, CmEventType.DISCONNECTED);
        assertEquals(LoopbackQueuePair.State.ERR, ((LoopbackQueuePair) f.serverQp).state());
        assertNull(f.client.localAddress());
        NativeCallException use = assertThrows(NativeCallException.class, () -> f.client.resolveRoute(1));
        assertTrue(use.getMessage().startsWith("rdma_resolve_route"), use.getMessage());
    }

    @Test
    void callsInTheWrongStateAreRefusedNamingTheCall() {
        f = new LoopbackFixture(LoopbackStack.create());
        CmId id = f.clientChannel.createId(PortSpace.TCP);
        NativeCallException e = assertThrows(NativeCallException.class, () -> id.connect(spec(null)));
        assertTrue(e.getMessage().startsWith("rdma_connect"), e.getMessage());
        assertThrows(NativeCallException.class, () -> id.resolveRoute(1));
        assertThrows(NativeCallException.class, () -> id.accept(spec(null)));
        assertThrows(NativeCallException.class, () -> id.listen(1));
        NativeCallException d = assertThrows(NativeCallException.class, id::disconnect);
        assertTrue(d.getMessage().startsWith("rdma_disconnect"), d.getMessage());
        id.close();
    }

    @Test
    void resourcesAreAccountedAndALeakIsListed() {
        LoopbackStack stack = LoopbackStack.create();
        f = LoopbackFixture.connected(stack);
        assertEquals(3, stack.resources().count(LoopbackResources.Kind.CM_ID));
        assertEquals(2, stack.resources().count(LoopbackResources.Kind.QUEUE_PAIR));
        AssertionError leak = assertThrows(AssertionError.class,
                () -> stack.resources().awaitReleased(Duration.ofMillis(20)));
        assertTrue(leak.getMessage().contains("QUEUE_PAIR: 2"), leak.getMessage());
        f.client.destroyQueuePair();
        f.server.destroyQueuePair();
        f.clientCq.close();
        f.serverCq.close();
        f.clientPd.close();
        f.serverPd.close();
        f.clientPd.close(); // idempotent
        f.client.close();
        f.server.close();
        f.listener.close();
        f.clientChannel.close();
        f.serverChannel.close();
        stack.resources().awaitReleased(Duration.ofSeconds(5));
        assertThrows(RuntimeException.class, () -> f.clientChannel.createId(PortSpace.TCP), "use after close");
    }

    @Test
    void clientAndServerMayUseDifferentDevices() {
        LoopbackStack stack = LoopbackStack.builder().device("a", "10.0.0.1").device("b", "10.0.0.2").build();
        f = new LoopbackFixture(stack);
        f.listener = f.serverChannel.createId(PortSpace.TCP);
        f.listener.bind(new InetSocketAddress("10.0.0.2", 0));
        f.listener.listen(1);
        CmChannel ch = f.clientChannel;
        f.client = ch.createId(PortSpace.TCP);
        f.client.resolveAddress(new InetSocketAddress("10.0.0.1", 0),
                new InetSocketAddress("10.0.0.2", f.listener.localAddress().getPort()), 100);
        next(ch, CmEventType.ADDR_RESOLVED);
        assertEquals("a", f.client.device().name());
        f.client.resolveRoute(100);
        next(ch, CmEventType.ROUTE_RESOLVED);
        f.clientPd = f.client.device().allocateProtectionDomain();
        f.clientCq = f.client.device().createCompletionQueue(16, false, 4, "a");
        f.clientQp = f.client.createQueuePair(f.clientPd, f.clientCq, QP);
        CmEventInfo req = f.request(spec(null), QP);
        assertEquals("b", req.id().device().name());
        f.accept(spec(null));
        assertEquals(1, stack.device("a").resources().count(LoopbackResources.Kind.QUEUE_PAIR));
        assertEquals(1, stack.device("b").resources().count(LoopbackResources.Kind.QUEUE_PAIR));
    }
}
