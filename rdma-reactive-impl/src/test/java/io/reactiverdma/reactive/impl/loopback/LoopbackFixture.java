package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue.Completion;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendWorkRequests;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Test support: a client and a server id connected over a loopback stack through rdma_cm, each with its own
 * channel, protection domain, CQ (with a completion channel) and QP; helpers to wait for events and
 * completions with timeouts.
 */
public final class LoopbackFixture implements AutoCloseable {
    public static final long WAIT_NS = TimeUnit.SECONDS.toNanos(5);
    public static final ConnectSpec SPEC = new ConnectSpec(4, 4, 3, 3, null);

    public final LoopbackStack stack;
    public final CmChannel clientChannel;
    public final CmChannel serverChannel;
    public CmId listener;
    public CmId client;
    public CmId server;
    public ProtectionDomain clientPd;
    public ProtectionDomain serverPd;
    public CompletionQueue clientCq;
    public CompletionQueue serverCq;
    public QueuePair clientQp;
    public QueuePair serverQp;

    public LoopbackFixture(LoopbackStack stack) {
        this.stack = stack;
        this.clientChannel = stack.openCmChannel();
        this.serverChannel = stack.openCmChannel();
    }

    /** Listens on 127.0.0.1 (a free port); returns the port. */
    public int listen() {
        listener = serverChannel.createId(PortSpace.TCP);
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        listener.listen(8);
        return listener.localAddress().getPort();
    }

    /** The client resolved to the server's port, with PD, CQ and QP, not connected yet. */
    public void prepareClient(int port, QpSpec spec) {
        client = clientChannel.createId(PortSpace.TCP);
        client.resolveAddress(null, new InetSocketAddress("127.0.0.1", port), 1000);
        next(clientChannel, CmEventType.ADDR_RESOLVED);
        client.resolveRoute(1000);
        next(clientChannel, CmEventType.ROUTE_RESOLVED);
        clientPd = client.device().allocateProtectionDomain();
        clientCq = client.device().createCompletionQueue(256, true, 16, "client-cq");
        clientQp = client.createQueuePair(clientPd, clientCq, spec);
    }

    /** Connect request received, server QP created, not accepted yet. */
    public CmEventInfo request(ConnectSpec clientSpec, QpSpec spec) {
        client.connect(clientSpec);
        CmEventInfo req = next(serverChannel, CmEventType.CONNECT_REQUEST);
        server = req.id();
        serverPd = server.device().allocateProtectionDomain();
        serverCq = server.device().createCompletionQueue(256, true, 16, "server-cq");
        serverQp = server.createQueuePair(serverPd, serverCq, spec);
        return req;
    }

    public void accept(ConnectSpec serverSpec) {
        server.accept(serverSpec);
        next(serverChannel, CmEventType.ESTABLISHED);
        next(clientChannel, CmEventType.ESTABLISHED);
    }

    public static LoopbackFixture connected(LoopbackStack stack) {
        return connected(stack, SPEC, SPEC, new QpSpec(16, 16, 64));
    }

    public static LoopbackFixture connected(LoopbackStack stack, ConnectSpec clientSpec, ConnectSpec serverSpec,
            QpSpec spec) {
        LoopbackFixture f = new LoopbackFixture(stack);
        f.prepareClient(f.listen(), spec);
        f.request(clientSpec, spec);
        f.accept(serverSpec);
        return f;
    }

    /** The next event on {@code channel}, which must be of {@code type} (waits at most 5 s). */
    public static CmEventInfo next(CmChannel channel, CmEventType type) {
        CmEventInfo e = next(channel, WAIT_NS);
        assertNotNull(e, "no " + type + " event within 5 s");
        assertEquals(type, e.type(), "event " + e);
        return e;
    }

    /** The next event, or null after {@code timeoutNs}. */
    public static CmEventInfo next(CmChannel channel, long timeoutNs) {
        long deadline = System.nanoTime() + timeoutNs;
        while (true) {
            CmEventInfo e = channel.nextEvent();
            if (e != null) {
                return e;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            channel.await(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    /** Exactly {@code n} completions from {@code cq} (waits at most 5 s for them). */
    public static List<Completion> completions(CompletionQueue cq, int n) {
        List<Completion> got = new ArrayList<>();
        long deadline = System.nanoTime() + WAIT_NS;
        while (got.size() < n) {
            cq.poll((w, s, o, v, b, i, f) -> got.add(new Completion(w, s, o, v, b, i, f)));
            if (System.nanoTime() - deadline > 0) {
                fail("only " + got.size() + " of " + n + " completions within 5 s: " + got);
            }
            if (got.size() < n) {
                Thread.onSpinWait();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
        }
        return got;
    }

    /** Completions arriving within {@code ms} (for asserting that none arrives). */
    public static List<Completion> drain(CompletionQueue cq, long ms) {
        List<Completion> got = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (System.nanoTime() - deadline < 0) {
            cq.poll((w, s, o, v, b, i, f) -> got.add(new Completion(w, s, o, v, b, i, f)));
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        return got;
    }

    public static Registration register(ProtectionDomain pd, int size, int access) {
        return pd.register(ByteBuffer.allocateDirect(size), access);
    }

    public static ByteBuffer buffer(Registration r) {
        return ((LoopbackRegistration) r).bufferForTests();
    }

    public static SendWorkRequests send(long wrId, io.reactiverdma.verbs.WrOpcode op, int flags, Registration r,
            long offset, int length) {
        SendWorkRequests w = new SendWorkRequests(4, 1);
        int i = w.add(wrId, op, flags);
        w.sge(i, r.address() + offset, length, r.lkey());
        return w;
    }

    public static ReceiveWorkRequests recv(long wrId, Registration r, long offset, int length) {
        ReceiveWorkRequests w = new ReceiveWorkRequests(4, 1);
        w.add(wrId, r.address() + offset, length, r.lkey());
        return w;
    }

    @Override
    public void close() {
        for (CmId id : new CmId[] {client, server}) {
            if (id != null) {
                id.destroyQueuePair();
                id.close();
            }
        }
        if (listener != null) {
            listener.close();
        }
        stack.close();
    }
}
