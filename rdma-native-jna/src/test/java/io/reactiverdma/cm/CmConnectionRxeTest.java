package io.reactiverdma.cm;

import io.reactiverdma.natives.ClosedResourceException;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.testsupport.RxeTestSupport;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.CompletionQueue;
import io.reactiverdma.verbs.IbvStructs;
import io.reactiverdma.verbs.MemoryRegion;
import io.reactiverdma.verbs.ProtectionDomain;
import io.reactiverdma.verbs.QpInitAttributes;
import io.reactiverdma.verbs.QpType;
import io.reactiverdma.verbs.QueuePair;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WorkCompletions;
import io.reactiverdma.verbs.WrOpcode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** rdma_cm on a real device: two ids in one JVM, both on the device's address (RXE_IP). */
@Tag(RxeTestSupport.TAG)
class CmConnectionRxeTest {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int TIMEOUT_MS = 5000;
    private InetAddress ip;

    @BeforeEach
    void requireDevice() throws Exception {
        RxeTestSupport.requireDevice();
        ip = InetAddress.getByName(RxeTestSupport.deviceAddress());
    }

    /** Everything one side of an RC connection owns, released by closing the channel. */
    private static final class Side {
        final EventChannel channel = EventChannel.create();
        RdmaCmId id;
        ProtectionDomain pd;
        CompletionQueue cq;
        QueuePair qp;
        MemoryRegion mr;
        ByteBuffer buf;

        void setUpQp(RdmaCmId on) {
            id = on;
            VerbsContext ctx = on.verbsContext();
            pd = ctx.allocPd();
            cq = ctx.createCompletionQueue(16, null, 0);
            qp = on.createQueuePair(pd, QpInitAttributes.rc(cq).maxSendWr(8).maxRecvWr(8).maxSendSge(1).maxRecvSge(1));
            buf = ByteBuffer.allocateDirect(8192);
            mr = pd.registerMemory(buf, AccessFlags.LOCAL_WRITE);
            ReceiveWorkRequests r = new ReceiveWorkRequests(1, 1);
            r.add(100, mr, 4096, 4096);
            qp.postReceive(r);
        }

        void close() {
            // The PD was allocated on librdmacm's (borrowed) context: close what we made on it, then the ids.
            channel.close();
            if (pd != null) {
                pd.close();
            }
            if (cq != null) {
                cq.close();
            }
        }
    }

    private static CmEvent await(EventChannel channel, CmEventType expected) {
        CmEvent e = channel.getEvent(WAIT);
        assertNotNull(e, "no rdma_cm event within " + WAIT + " (expected " + expected + ")");
        assertEquals(expected, e.type(), "event " + e);
        return e;
    }

    private static int awaitCompletion(CompletionQueue cq, WorkCompletions wcs) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            int n = cq.poll(wcs);
            if (n > 0) {
                return n;
            }
            Thread.onSpinWait();
        }
        fail("no completion within " + WAIT);
        return 0;
    }

    private RdmaCmId listen(Side server) {
        RdmaCmId listener = RdmaCmId.create(server.channel, PortSpace.TCP);
        listener.bind(new InetSocketAddress(ip, 0));
        listener.listen(4);
        InetSocketAddress bound = listener.localAddress();
        assertEquals(ip, bound.getAddress());
        assertTrue(bound.getPort() > 0, "ephemeral port assigned: " + bound);
        return listener;
    }

    private void resolve(Side client, InetSocketAddress to) {
        client.id = RdmaCmId.create(client.channel, PortSpace.TCP);
        client.id.resolveAddress(null, to, TIMEOUT_MS);
        await(client.channel, CmEventType.ADDR_RESOLVED);
        client.id.resolveRoute(TIMEOUT_MS);
        await(client.channel, CmEventType.ROUTE_RESOLVED);
    }

    @Test
    void connectSendBothWaysAndDisconnect() {
        Side server = new Side();
        Side client = new Side();
        try {
            RdmaCmId listener = listen(server);
            resolve(client, listener.localAddress());
            assertEquals(listener.localAddress(), client.id.peerAddress());
            client.setUpQp(client.id);
            byte[] hello = "hello-from-client".getBytes(StandardCharsets.US_ASCII);
            client.id.connect(ConnParam.create().privateData(hello));

            CmEvent request = await(server.channel, CmEventType.CONNECT_REQUEST);
            assertSame(listener, request.listenId());
            assertArrayEquals(hello, request.privateDataTrimmed());
            server.setUpQp(request.id());
            byte[] welcome = "welcome".getBytes(StandardCharsets.US_ASCII);
            request.id().accept(ConnParam.create().privateData(welcome));

            CmEvent established = await(client.channel, CmEventType.ESTABLISHED);
            assertArrayEquals(welcome, established.privateDataTrimmed());
            await(server.channel, CmEventType.ESTABLISHED);
            assertEquals(server.qp.qpNum(), established.remoteQpNum());

            sendAndCheck(client, server, "ping over rdma_cm");
            sendAndCheck(server, client, "pong over rdma_cm");

            // Active side sends DREQ; the passive side sees DISCONNECTED and answers with its own
            // rdma_disconnect (the DREP); only then does the active side see DISCONNECTED.
            client.id.disconnect();
            await(server.channel, CmEventType.DISCONNECTED);
            server.id.disconnect();
            await(client.channel, CmEventType.DISCONNECTED);
        } finally {
            client.close();
            server.close();
        }
        assertTrue(client.id.isClosed() && server.id.isClosed(), "channels closed their ids");
    }

    /**
     * Review finding 7 (native layer): QpInitAttributes without a receive CQ used to reach rdma_create_qp as
     * NULL, so librdmacm made a CQ (and channel) of its own that nobody polled, while the wrapper claimed the
     * send CQ. Now the send CQ is the receive CQ too.
     */
    @Test
    void aQueuePairGivenOnlyASendCqReceivesOnThatCq() {
        Side client = new Side();
        Side server = new Side();
        try {
            RdmaCmId listener = listen(server);
            resolve(client, listener.localAddress());
            VerbsContext ctx = client.id.verbsContext();
            client.pd = ctx.allocPd();
            client.cq = ctx.createCompletionQueue(16, null, 0);
            client.qp = client.id.createQueuePair(client.pd, new QpInitAttributes(QpType.RC).sendCq(client.cq)
                    .maxSendWr(4).maxRecvWr(4).maxSendSge(1).maxRecvSge(1));
            long recvCq = client.qp.pointer().getLong(IbvStructs.IbvQp.RECV_CQ_OFFSET);
            assertEquals(client.cq.address(), recvCq, "ibv_qp.recv_cq is the send CQ, not one librdmacm made");
        } finally {
            client.close();
            server.close();
        }
    }

    private static void sendAndCheck(Side from, Side to, String text) {
        byte[] payload = text.getBytes(StandardCharsets.US_ASCII);
        from.buf.put(0, payload);
        SendWorkRequests s = new SendWorkRequests(1, 1);
        s.sge(s.add(7, WrOpcode.SEND, SendFlags.SIGNALED), from.mr, 0, payload.length);
        from.qp.postSend(s);
        WorkCompletions wcs = new WorkCompletions(4);
        awaitCompletion(from.cq, wcs);
        assertTrue(wcs.isSuccess(0), wcs.describe(0));
        assertEquals(7, wcs.wrId(0));
        awaitCompletion(to.cq, wcs);
        assertTrue(wcs.isSuccess(0), wcs.describe(0));
        assertEquals(WcOpcode.RECV, wcs.opcode(0));
        assertEquals(payload.length, wcs.byteLen(0));
        byte[] got = new byte[payload.length];
        to.buf.get(4096, got);
        assertArrayEquals(payload, got);
        ReceiveWorkRequests r = new ReceiveWorkRequests(1, 1);
        r.add(100, to.mr, 4096, 4096);
        to.qp.postReceive(r);
    }

    @Test
    void rejectCarriesPrivateData() {
        Side server = new Side();
        Side client = new Side();
        try {
            RdmaCmId listener = listen(server);
            resolve(client, listener.localAddress());
            client.setUpQp(client.id);
            client.id.connect(ConnParam.create());
            CmEvent request = await(server.channel, CmEventType.CONNECT_REQUEST);
            byte[] no = "go away".getBytes(StandardCharsets.US_ASCII);
            request.id().reject(no);
            CmEvent rejected = await(client.channel, CmEventType.REJECTED);
            assertArrayEquals(no, rejected.privateDataTrimmed());
            assertTrue(rejected.status() != 0, "a reject reason: " + rejected);
            request.id().close();
        } finally {
            client.close();
            server.close();
        }
    }

    @Test
    void connectingToAPortNobodyListensOnFailsWithAnEventNotAHang() {
        Side client = new Side();
        try {
            resolve(client, new InetSocketAddress(ip, 7)); // nothing listens on rdma_cm port 7
            client.setUpQp(client.id);
            client.id.connect(ConnParam.create());
            CmEvent e = client.channel.getEvent(WAIT);
            assertNotNull(e, "no event within " + WAIT + ": the connect hung");
            Set<CmEventType> failures = EnumSet.of(CmEventType.REJECTED, CmEventType.UNREACHABLE,
                    CmEventType.CONNECT_ERROR);
            assertTrue(failures.contains(e.type()), "expected REJECTED/UNREACHABLE/CONNECT_ERROR, got " + e);
        } finally {
            client.close();
        }
    }

    @Test
    void resolvingAnAddressNobodyHasFailsWithinTheTimeout() throws Exception {
        try (EventChannel channel = EventChannel.create()) {
            RdmaCmId id = RdmaCmId.create(channel, PortSpace.TCP);
            // TEST-NET-1 (RFC 5737): no route leads there (the VM has no default route and no network card).
            // An address on the device's own subnet would not do: the dummy netdev is NOARP, so any
            // neighbour "resolves" at once.
            try {
                id.resolveAddress(null, new InetSocketAddress(InetAddress.getByName("192.0.2.1"), 7471), 1000);
                CmEvent e = channel.getEvent(WAIT);
                assertNotNull(e, "no event within " + WAIT);
                assertEquals(CmEventType.ADDR_ERROR, e.type(), "event " + e);
                assertTrue(e.status() < 0, "negative errno status: " + e);
            } catch (NativeCallException immediate) {
                // Some kernels fail at once (no route): also a typed error, not a hang.
                assertTrue(immediate.call().equals("rdma_resolve_addr"), immediate.getMessage());
            }
        }
    }

    @Test
    void lifecycleCloseBeforeConnectTwiceAndUseAfterClose() {
        EventChannel channel = EventChannel.create();
        RdmaCmId neverConnected = RdmaCmId.create(channel, PortSpace.TCP);
        neverConnected.close();
        neverConnected.close();
        ClosedResourceException e = assertThrows(ClosedResourceException.class,
                () -> neverConnected.resolveRoute(1000));
        assertTrue(e.getMessage().contains("rdma_cm_id"), e.getMessage());
        assertThrows(ClosedResourceException.class, neverConnected::localAddress);
        assertThrows(IllegalArgumentException.class, () -> RdmaCmId.create(channel, PortSpace.TCP).resolveRoute(0));

        RdmaCmId live = RdmaCmId.create(channel, PortSpace.UDP);
        live.bind(new InetSocketAddress(ip, 0));
        assertNotNull(live.verbsContext(), "bound to the device's address, so bound to the device");
        channel.close(); // closes the live ids first
        assertTrue(live.isClosed());
        channel.close();
        assertThrows(ClosedResourceException.class, () -> channel.getEvent(Duration.ZERO));
        assertThrows(ClosedResourceException.class, () -> RdmaCmId.create(channel, PortSpace.TCP));
    }

    @Test
    void getEventTimesOutWithNull() {
        try (EventChannel channel = EventChannel.create()) {
            long t0 = System.nanoTime();
            assertEquals(null, channel.getEvent(Duration.ofMillis(200)));
            assertTrue(System.nanoTime() - t0 >= 150_000_000L, "waited about the timeout");
        }
    }

    @Test
    void getAddrInfoOnTheDeviceAddress() {
        List<RdmaAddrInfo> infos = RdmaAddrInfo.resolve(ip.getHostAddress(), "7471", false);
        assertFalse(infos.isEmpty());
        assertEquals(new InetSocketAddress(ip, 7471), infos.get(0).destination());
        assertEquals(PortSpace.TCP, infos.get(0).portSpace());
    }

    @Test
    void pdFromAnotherDeviceContextIsRefused() {
        try (EventChannel channel = EventChannel.create();
             VerbsContext own = io.reactiverdma.verbs.VerbsDevice.open(RxeTestSupport.deviceName())) {
            RdmaCmId id = RdmaCmId.create(channel, PortSpace.TCP);
            id.bind(new InetSocketAddress(ip, 0));
            ProtectionDomain foreign = own.allocPd();
            CompletionQueue cq = own.createCompletionQueue(4, null, 0);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> id.createQueuePair(foreign, QpInitAttributes.rc(cq)));
            assertTrue(e.getMessage().contains("verbsContext()"), e.getMessage());
        }
    }

    /**
     * RDMA_OPTION_ID_ACK_TIMEOUT set on each side before connect/accept is the timeout of that side's QP (rxe
     * takes any exponent); the retry count is the client's on both; a type of service set before resolving
     * is accepted.
     */
    @Test
    void ackTimeoutAndRetryCountReachTheQueuePairs() {
        Side server = new Side();
        Side client = new Side();
        try {
            RdmaCmId listener = listen(server);
            client.id = RdmaCmId.create(client.channel, PortSpace.TCP);
            client.id.setTypeOfService(32);
            client.id.resolveAddress(null, listener.localAddress(), TIMEOUT_MS);
            await(client.channel, CmEventType.ADDR_RESOLVED);
            client.id.resolveRoute(TIMEOUT_MS);
            await(client.channel, CmEventType.ROUTE_RESOLVED);
            client.setUpQp(client.id);
            client.id.setAckTimeout(14);
            client.id.connect(ConnParam.create().retryCount(5));
            CmEvent request = await(server.channel, CmEventType.CONNECT_REQUEST);
            server.setUpQp(request.id());
            request.id().setAckTimeout(12);
            request.id().accept(ConnParam.create().retryCount(2)); // ignored on accept: the request's count rules
            await(client.channel, CmEventType.ESTABLISHED);
            await(server.channel, CmEventType.ESTABLISHED);
            assertEquals(14, client.qp.query().timeout());
            assertEquals(12, server.qp.query().timeout());
            assertEquals(5, client.qp.query().retryCnt());
            assertEquals(5, server.qp.query().retryCnt());
            sendAndCheck(client, server, "with ack timeouts set");
        } finally {
            client.close();
            server.close();
        }
    }

    @Test
    void rdmaGetDevicesListsTheContextsIdsResolveTo() {
        List<VerbsContext> devices = RdmaCmId.devices();
        assertFalse(devices.isEmpty());
        try (EventChannel channel = EventChannel.create()) {
            RdmaCmId id = RdmaCmId.create(channel, PortSpace.TCP);
            id.bind(new InetSocketAddress(ip, 0));
            VerbsContext bound = id.verbsContext();
            assertTrue(devices.contains(bound), "the bound id's context is one of " + devices);
            assertEquals(RxeTestSupport.deviceName(), bound.deviceName());
            id.close();
        }
        assertFalse(RdmaCmId.devices().get(0).isClosed(), "listing again leaves librdmacm's contexts open");
    }
}
