package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
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
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A plain rdma_cm peer on raw verbs, on any {@link RdmaStack} (the loopback device or rxe through JNA): no
 * private data (so no credits), its own receives posted before it connects and reposted as each reply is
 * read, SENDs posted as the caller says. What a C client written from rdma-core's examples does, so the
 * engine's server can be tested against a peer that cannot see credits.
 *
 * <p>Not thread-safe: one test thread drives it.
 */
public final class PlainPeer implements AutoCloseable {
    /** Receives kept posted for the server's messages (wr_ids 0..RECEIVES-1; sends use larger ones). */
    static final int RECEIVES = 16;
    private static final int SEND_SLOTS = 64;
    private static final long SEND_WR_BASE = 1_000_000;

    private final CmChannel channel;
    private final CmId id;
    private final int bufferSize;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private ByteBuffer memory;
    private Registration registration;
    private final ReceiveWorkRequests receiveWr = new ReceiveWorkRequests(1, 1);
    private final SendWorkRequests sendWr = new SendWorkRequests(1, 1);
    private long sent;
    private long sendsCompleted;
    private final Completion last = new Completion();

    /** The last completion polled. */
    static final class Completion {
        long wrId;
        int status;
        int byteLen;
    }

    private PlainPeer(CmChannel channel, CmId id, int bufferSize) {
        this.channel = channel;
        this.id = id;
        this.bufferSize = bufferSize;
    }

    /**
     * Connects to {@code host:port} with {@code rnrRetry} receiver-not-ready retries (0: the first RNR NAK
     * fails the send with RNR_RETRY_EXC_ERR, so a test sees every RNR) and no private data.
     */
    public static PlainPeer connect(RdmaStack stack, String host, int port, int rnrRetry, int bufferSize, Duration wait) {
        CmChannel channel = stack.openCmChannel();
        CmId id = channel.createId(PortSpace.TCP);
        PlainPeer p = new PlainPeer(channel, id, bufferSize);
        try {
            int ms = (int) wait.toMillis();
            id.resolveAddress(null, new InetSocketAddress(host, port), ms);
            next(channel, CmEventType.ADDR_RESOLVED, wait);
            id.resolveRoute(ms);
            next(channel, CmEventType.ROUTE_RESOLVED, wait);
            p.pd = id.device().allocateProtectionDomain();
            p.cq = id.device().createCompletionQueue(RECEIVES + SEND_SLOTS + 8, false, 1, "plain-peer"); // one per poll: see pollOne
            p.qp = id.createQueuePair(p.pd, p.cq, new QpSpec(SEND_SLOTS, RECEIVES, 0));
            p.memory = ByteBuffer.allocateDirect((RECEIVES + SEND_SLOTS) * bufferSize);
            p.registration = p.pd.register(p.memory, AccessFlags.LOCAL_WRITE);
            for (int i = 0; i < RECEIVES; i++) {
                p.postReceive(i);
            }
            id.connect(new ConnectSpec(1, 1, 7, rnrRetry, null));
            next(channel, CmEventType.ESTABLISHED, wait);
            return p;
        } catch (RuntimeException | AssertionError e) {
            p.close();
            throw e;
        }
    }

    private void postReceive(int index) {
        receiveWr.clear();
        receiveWr.add(index, registration.address() + (long) index * bufferSize, bufferSize, registration.lkey());
        qp.postReceive(receiveWr);
    }

    /** Posts a signalled SEND of {@code message} (at most {@code SEND_SLOTS} not completed: one staging slot each). */
    public void send(byte[] message) {
        if (message.length > bufferSize) {
            throw new IllegalArgumentException(message.length + " bytes do not fit " + bufferSize);
        }
        if (sent - sendsCompleted >= SEND_SLOTS) {
            throw new IllegalStateException(SEND_SLOTS + " sends in flight already");
        }
        int at = (RECEIVES + (int) (sent % SEND_SLOTS)) * bufferSize;
        memory.put(at, message);
        sendWr.clear();
        int i = sendWr.add(SEND_WR_BASE + sent, WrOpcode.SEND, SendFlags.SIGNALED);
        sendWr.sge(i, registration.address() + at, message.length, registration.lkey());
        qp.postSend(sendWr);
        sent++;
    }

    /** Waits for the send posted last to complete; fails naming the status when it did not succeed. */
    public void awaitSent(Duration wait) {
        while (sendsCompleted < sent) {
            pollOne(wait);
            if (last.wrId >= SEND_WR_BASE) {
                sendsCompleted++;
                check("SEND " + (last.wrId - SEND_WR_BASE));
            } else {
                throw new AssertionError("a reply arrived before the request's send completed; not expected here");
            }
        }
    }

    /**
     * Sends {@code message}, waits for its completion and for the server's next message, reposts that
     * receive and returns the message.
     */
    public byte[] request(byte[] message, Duration wait) {
        send(message);
        return next(wait);
    }

    /** Waits for the server's next message (and the completions of the sends posted), reposts its receive. */
    public byte[] next(Duration wait) {
        byte[] reply = null;
        while (reply == null || sendsCompleted < sent) {
            pollOne(wait);
            if (last.wrId >= SEND_WR_BASE) {
                sendsCompleted++;
                check("SEND " + (last.wrId - SEND_WR_BASE));
            } else {
                check("RECV");
                int index = (int) last.wrId;
                reply = new byte[last.byteLen];
                memory.get(index * bufferSize, reply);
                postReceive(index);
            }
        }
        return reply;
    }

    private void check(String what) {
        if (last.status != WcStatus.SUCCESS.value()) {
            throw new AssertionError("the plain peer's " + what + " completed with " + WcStatus.of(last.status));
        }
    }

    private void pollOne(Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (cq.poll(this::record) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no completion within " + wait + " (" + sendsCompleted + " of " + sent
                        + " sends completed)");
            }
            Thread.onSpinWait();
        }
    }

    private void record(long wrId, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        last.wrId = wrId;
        last.status = status;
        last.byteLen = byteLen;
    }

    static CmEventInfo next(CmChannel channel, CmEventType type, Duration wait) {
        long deadline = System.nanoTime() + wait.toNanos();
        while (true) {
            CmEventInfo e = channel.nextEvent();
            if (e != null) {
                if (e.type() != type) {
                    throw new AssertionError("expected " + type + ", got " + e);
                }
                return e;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no " + type + " within " + wait);
            }
            channel.await(Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
        }
    }

    @Override
    public void close() {
        try {
            id.disconnect();
        } catch (RuntimeException notConnected) {
            // never connected, or the server closed first
        }
        try {
            if (qp != null) {
                id.destroyQueuePair();
            }
        } finally {
            id.close();
            if (registration != null) {
                registration.deregister();
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
}
