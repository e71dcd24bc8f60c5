package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.ConnectSpec;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A hostile peer on raw verbs (any {@link RdmaStack}: the loopback device, or rdma-core on rxe): it connects
 * with a valid credit offer, as the engine's clients do, and then does what they never do: stays silent (never
 * sends the 0-byte hello), or sends SENDs without credits. Not thread-safe; one test thread drives it.
 */
final class RawCreditPeer implements AutoCloseable {
    static final int BUFFER = 256;

    private final CmChannel channel;
    private final CmId id;
    private final String name;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private Registration word;
    private Registration src;
    private final List<CmEventType> events = new ArrayList<>();

    RawCreditPeer(RdmaStack stack, String name) {
        this.channel = stack.openCmChannel();
        this.id = channel.createId(PortSpace.TCP);
        this.name = name;
    }

    /**
     * Resolves {@code server}, creates the QP and sends the connect request with a credit offer; does not wait
     * for the answer (a server may keep it waiting: see {@link #awaitEnd}).
     */
    RawCreditPeer connect(InetSocketAddress server, Duration wait) {
        int ms = (int) Math.min(Integer.MAX_VALUE, wait.toMillis());
        id.resolveAddress(null, server, ms);
        expect(CmEventType.ADDR_RESOLVED, wait);
        id.resolveRoute(ms);
        expect(CmEventType.ROUTE_RESOLVED, wait);
        pd = id.device().allocateProtectionDomain();
        cq = id.device().createCompletionQueue(64, false, 16, name);
        qp = id.createQueuePair(pd, cq, new QpSpec(32, 4, 64));
        word = pd.register(ByteBuffer.allocateDirect(8), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        src = pd.register(ByteBuffer.allocateDirect(16), AccessFlags.LOCAL_WRITE);
        ReceiveWorkRequests forServerHello = new ReceiveWorkRequests(1, 0); // as engine clients post it
        forServerHello.add(2L << 40);
        qp.postReceive(forServerHello);
        byte[] offer = new Negotiation(true, word.address(), word.rkey(), BUFFER).encode();
        id.connect(new ConnectSpec(4, 4, 3, 6, offer));
        return this;
    }

    /** Waits for ESTABLISHED; false when the connection ended (rejected) instead or nothing came in time. */
    boolean awaitEstablished(Duration wait) {
        CmEventType t = nextType(wait);
        return t == CmEventType.ESTABLISHED;
    }

    /**
     * Waits until the server ended this connection (REJECTED, DISCONNECTED, UNREACHABLE); returns the events
     * seen meanwhile (ESTABLISHED first when it was accepted), or fails after {@code wait}.
     */
    List<CmEventType> awaitEnd(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (!ended()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError(name + ": the server did not end the connection within " + wait
                        + " (events " + events + ")");
            }
            nextType(Duration.ofNanos(left));
        }
        return List.copyOf(events);
    }

    /** Whether the server ended the connection, looking at the events queued now without waiting. */
    boolean endedNow() {
        CmEventInfo e;
        while (!ended() && (e = channel.nextEvent()) != null) {
            events.add(e.type());
        }
        return ended();
    }

    private boolean ended() {
        return events.contains(CmEventType.REJECTED) || events.contains(CmEventType.DISCONNECTED)
                || events.contains(CmEventType.UNREACHABLE) || events.contains(CmEventType.CONNECT_ERROR);
    }

    /** Sends the hello an honest peer sends: a 0-byte SEND (this peer then never writes the server's word). */
    void sendHello() {
        SendWorkRequests w = new SendWorkRequests(1, 0);
        w.add(1L << 40, WrOpcode.SEND, SendFlags.SIGNALED);
        qp.postSend(w);
    }

    /** Posts {@code n} 16-byte SENDs at once, whatever the credits (unsignalled but the last). */
    void sendWithoutCredits(int n) {
        for (int i = 0; i < n; i++) {
            SendWorkRequests w = new SendWorkRequests(1, 1);
            int k = w.add(i, WrOpcode.SEND, i == n - 1 ? SendFlags.SIGNALED : 0);
            w.sge(k, src.address(), 16, src.lkey());
            qp.postSend(w);
        }
    }

    private void expect(CmEventType type, Duration wait) {
        CmEventType t = nextType(wait);
        if (t != type) {
            throw new AssertionError(name + ": expected " + type + ", got " + t);
        }
    }

    private CmEventType nextType(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            CmEventInfo e = channel.nextEvent();
            if (e != null) {
                events.add(e.type());
                return e.type();
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            channel.await(Math.min(left, Duration.ofMillis(50).toNanos()));
        }
    }

    @Override
    public void close() {
        try {
            if (qp != null) {
                id.destroyQueuePair();
            }
            id.close();
        } finally {
            if (word != null) {
                word.deregister();
            }
            if (src != null) {
                src.deregister();
            }
            if (cq != null) {
                cq.close();
            }
            if (pd != null) {
                pd.close();
            }
            channel.close();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
