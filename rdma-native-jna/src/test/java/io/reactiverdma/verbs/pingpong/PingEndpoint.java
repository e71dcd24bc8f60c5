package io.reactiverdma.verbs.pingpong;

import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.AddressHandleAttributes;
import io.reactiverdma.verbs.CompletionQueue;
import io.reactiverdma.verbs.GidEntry;
import io.reactiverdma.verbs.MemoryRegion;
import io.reactiverdma.verbs.Mtu;
import io.reactiverdma.verbs.PortAttributes;
import io.reactiverdma.verbs.ProtectionDomain;
import io.reactiverdma.verbs.QpAttributes;
import io.reactiverdma.verbs.QpInitAttributes;
import io.reactiverdma.verbs.QueuePair;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.VerbsContext;
import io.reactiverdma.verbs.VerbsDevice;
import io.reactiverdma.verbs.WorkCompletions;
import io.reactiverdma.verbs.WrOpcode;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.TimeoutException;

/**
 * One side of the ping: an RC queue pair on the native verbs layer, brought up out of band the way
 * {@code ibv_rc_pingpong} does (QP number, PSN and GID exchanged over a TCP socket, then
 * RESET→INIT→RTR→RTS by hand), and the ping-pong loop. Everything native is released by {@link #close()}.
 */
final class PingEndpoint implements AutoCloseable {
    static final long RECV_WRID = 1;
    static final long SEND_WRID = 2;
    private static final int PORT = 1;
    private static final int SLACK_RECEIVES = 4;

    private final PingOptions options;
    private final VerbsContext context;
    private final ProtectionDomain pd;
    private final MemoryRegion mr;
    private final ByteBuffer sendBuf;
    private final ByteBuffer recvBuf;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final Destination local;
    private final Mtu mtu;
    private final int gidIndex;
    private final SendWorkRequests send = new SendWorkRequests(1, 1);
    private final ReceiveWorkRequests receive = new ReceiveWorkRequests(1, 1);
    private final WorkCompletions wcs = new WorkCompletions(16);

    PingEndpoint(PingOptions options) {
        this.options = options;
        VerbsContext ctx = VerbsDevice.open(options.device());
        try {
            this.context = ctx;
            PortAttributes port = ctx.queryPort(PORT);
            this.mtu = options.mtu() != null ? options.mtu() : port.activeMtu();
            GidEntry gid = options.gidIndex() >= 0 ? entry(ctx, options.gidIndex())
                    : ctx.findRoceV2Ipv4Gid(PORT).orElseGet(() -> entry(ctx, 0));
            this.gidIndex = gid.index();
            this.pd = ctx.allocPd();
            // One registration for both buffers: [0, size) is sent from, [size, 2*size) received into.
            ByteBuffer region = ByteBuffer.allocateDirect(2 * options.size());
            this.mr = pd.registerMemory(region, AccessFlags.LOCAL_WRITE);
            this.sendBuf = region.duplicate().position(0).limit(options.size()).slice();
            this.recvBuf = region.duplicate().position(options.size()).limit(2 * options.size()).slice();
            this.cq = ctx.createCompletionQueue(options.rxDepth() + SLACK_RECEIVES + 1, null, 0);
            this.qp = pd.createQueuePair(QpInitAttributes.rc(cq).maxSendWr(1)
                    .maxRecvWr(options.rxDepth()).maxSendSge(1).maxRecvSge(1));
            qp.toInit(new QpAttributes().portNum(PORT).pkeyIndex(0).accessFlags(0));
            this.local = new Destination(port.lid(), qp.qpNum(), new SecureRandom().nextInt(0xffffff),
                    gid.gid());
        } catch (RuntimeException e) {
            ctx.close();
            throw e;
        }
    }

    private static GidEntry entry(VerbsContext ctx, int index) {
        return ctx.queryGidEntry(PORT, index);
    }

    Destination local() {
        return local;
    }

    int gidIndex() {
        return gidIndex;
    }

    Mtu mtu() {
        return mtu;
    }

    /** Posts {@code rxDepth} receives; done before the peer can send, so no message meets an empty queue. */
    void postInitialReceives() {
        for (int i = 0; i < options.rxDepth(); i++) {
            postReceive();
        }
    }

    private void postReceive() {
        receive.clear();
        receive.add(RECV_WRID, mr, options.size(), options.size());
        qp.postReceive(receive);
    }

    /** INIT→RTR→RTS towards {@code remote}. */
    void connect(Destination remote) {
        AddressHandleAttributes av = new AddressHandleAttributes().dlid(remote.lid()).serviceLevel(0)
                .portNum(PORT);
        if (!remote.gid().isZero()) {
            av.global(remote.gid(), gidIndex).hopLimit(1);
        }
        qp.toRtr(new QpAttributes().pathMtu(mtu).destQpNum(remote.qpn()).rqPsn(remote.psn())
                .maxDestRdAtomic(1).minRnrTimer(12).addressVector(av));
        qp.toRts(new QpAttributes().timeout(14).retryCnt(7).rnrRetry(options.rnrRetry()).sqPsn(local.psn())
                .maxRdAtomic(1));
    }

    /** The client side of ibv_rc_pingpong's exchange: send ours, read theirs, connect, say "done". */
    Destination exchangeAsClient(Socket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        InputStream in = socket.getInputStream();
        out.write(local.toWire());
        out.flush();
        Destination remote = Destination.fromWire(in.readNBytes(Destination.WIRE_LENGTH));
        connect(remote);
        out.write("done\0".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.flush();
        return remote;
    }

    /** The server side: read theirs, connect (so our RTR precedes their first send), send ours, await "done". */
    Destination exchangeAsServer(Socket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        InputStream in = socket.getInputStream();
        byte[] wire = in.readNBytes(Destination.WIRE_LENGTH);
        if (wire.length != Destination.WIRE_LENGTH) {
            throw new IOException("peer closed the exchange after " + wire.length + " bytes");
        }
        Destination remote = Destination.fromWire(wire);
        connect(remote);
        out.write(local.toWire());
        out.flush();
        in.readNBytes(5);
        return remote;
    }

    /**
     * The client's loop: send message i, wait until both its send completion and the peer's reply have
     * arrived, record the round trip. With {@code verify}, the reply must equal what was sent (the Java
     * server echoes; ibv_rc_pingpong does not).
     */
    RoundTripStats runClient(boolean verify) throws TimeoutException {
        RoundTripStats stats = new RoundTripStats(options.iterations());
        byte[] sent = new byte[options.size()];
        byte[] got = new byte[options.size()];
        for (int i = 0; i < options.iterations(); i++) {
            fillPattern(sent, i);
            sendBuf.put(0, sent);
            long t0 = System.nanoTime();
            postSend();
            awaitSendAndReceive(i);
            stats.record(System.nanoTime() - t0);
            if (verify) {
                recvBuf.get(0, got);
                if (!Arrays.equals(sent, got)) {
                    throw new IllegalStateException("reply " + i + " differs from the message sent");
                }
            }
        }
        return stats;
    }

    /**
     * The server's loop, shaped like ibv_rc_pingpong's: reply to each message once both the message and the
     * previous reply's send completion are in. The peer's next message may arrive before that completion
     * is polled, so completions are taken in any order; each message is copied out at once (the reply goes
     * from the send buffer only when the previous send has completed).
     */
    void runServer() throws TimeoutException {
        byte[] echo = new byte[options.size()];
        int received = 0;
        int sent = 0;
        boolean awaitingSend = false;
        boolean haveMessage = false;
        long deadline = System.nanoTime() + options.timeoutNs();
        while (sent < options.iterations()) {
            int n = cq.poll(wcs);
            for (int k = 0; k < n; k++) {
                checkSuccess(k, received);
                if (wcs.wrId(k) == SEND_WRID) {
                    awaitingSend = false;
                } else {
                    recvBuf.get(0, echo);
                    postReceive();
                    received++;
                    haveMessage = true;
                }
            }
            if (haveMessage && !awaitingSend) {
                sendBuf.put(0, echo);
                postSend();
                sent++;
                haveMessage = false;
                awaitingSend = true;
            }
            if (n > 0) {
                deadline = System.nanoTime() + options.timeoutNs();
            } else if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("server stalled after " + received + " messages and " + sent
                        + " replies: nothing completed within " + options.timeoutNs() / 1_000_000 + " ms");
            }
        }
        awaitCompletion(SEND_WRID, sent - 1);
    }

    private void postSend() {
        send.clear();
        int w = send.add(SEND_WRID, WrOpcode.SEND, SendFlags.SIGNALED);
        send.sge(w, mr, 0, options.size());
        qp.postSend(send);
    }

    private void awaitSendAndReceive(int iteration) throws TimeoutException {
        boolean sent = false;
        boolean received = false;
        long deadline = System.nanoTime() + options.timeoutNs();
        while (!(sent && received)) {
            int n = cq.poll(wcs);
            for (int k = 0; k < n; k++) {
                checkSuccess(k, iteration);
                if (wcs.wrId(k) == SEND_WRID) {
                    sent = true;
                } else {
                    received = true;
                    postReceive();
                }
            }
            if (n == 0 && System.nanoTime() - deadline > 0) {
                throw new TimeoutException("no " + (sent ? "reply" : "send completion") + " for message "
                        + iteration + " within " + options.timeoutNs() / 1_000_000 + " ms");
            }
        }
    }

    private void awaitCompletion(long wrId, int iteration) throws TimeoutException {
        long deadline = System.nanoTime() + options.timeoutNs();
        while (true) {
            int n = cq.poll(wcs);
            boolean found = false;
            for (int k = 0; k < n; k++) {
                checkSuccess(k, iteration);
                if (wcs.wrId(k) != wrId) {
                    throw new IllegalStateException("unexpected completion " + wcs.describe(k));
                }
                found = true;
            }
            if (found) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("no " + (wrId == RECV_WRID ? "message" : "send completion") + " "
                        + iteration + " within " + options.timeoutNs() / 1_000_000 + " ms");
            }
        }
    }

    private void checkSuccess(int k, int iteration) {
        if (!wcs.isSuccess(k)) {
            throw new IllegalStateException("message " + iteration + ": work completion failed: " + wcs.describe(k));
        }
    }

    static void fillPattern(byte[] b, int iteration) {
        for (int j = 0; j < b.length; j++) {
            b[j] = (byte) (iteration * 31 + j);
        }
    }

    @Override
    public void close() {
        // Closing the context closes its children (QP, CQ, MR, PD) in reverse creation order.
        context.close();
    }
}
