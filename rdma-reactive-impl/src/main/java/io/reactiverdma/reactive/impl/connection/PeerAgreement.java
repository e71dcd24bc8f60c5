package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;

/**
 * What one connection agreed with its peer when it was set up, and the set-up steps that apply it: this
 * side's offer, the peer's answer (credit flow control when both offered it, the peer's receive buffer
 * size, the peer application's private data), the QP's {@code MIN_RNR_TIMER} once it is in RTS, and a
 * server's wait until its peer's hello will find a receive. Every agreement is made before the connection
 * is handed to the application; the values are readable from any thread afterwards.
 */
public final class PeerAgreement {
    private final EngineConnection c;
    private volatile int peerReceiveBufferSize;
    private volatile boolean credits;
    /** The peer application's private data (connect request or accept reply), set before ESTABLISHED. */
    private volatile byte[] peerPrivateData = new byte[0];
    /** Poller thread: the peer's hello will find a receive (see {@link #whenPeerHelloCanArrive}). */
    private boolean helloReceiveKept;

    PeerAgreement(EngineConnection c) {
        this.c = c;
    }

    /** What this side offers in its connect request or accept reply. */
    public Negotiation offer() {
        return new Negotiation(c.resources.creditsOffered, c.resources.creditWord.incomingAddress(),
                c.handshake.wordRkey(), c.config().option(RdmaOption.RECEIVE_BUFFER_SIZE));
    }

    /** Applies the peer's offer (null: a plain peer, nothing negotiated). Before ESTABLISHED; any thread. */
    public void applyPeerOffer(Negotiation peer) {
        boolean agreed = peer != null && c.resources.creditsOffered && peer.credits();
        peerReceiveBufferSize = peer == null ? 0 : peer.receiveBufferSize();
        credits = agreed;
        c.poller.run(() -> {
            c.flow.useCredits(agreed);
            if (agreed) {
                c.handshake.start(peer.creditAddress(), peer.creditRkey());
            } else {
                c.requestFlush(); // no credits: the receive window is posted ahead of demand (see FlowControl)
            }
        });
    }

    /**
     * The default {@code MIN_RNR_TIMER} of a server's connection on a shared receive queue: code 26, 81.92 ms.
     * There a peer that keeps to its credits meets RNR only when a peer that does not took the receives it
     * was promised, until the SRQ's poller posts them again (server-guide.md, "No RNR"). The honest peer's
     * device retries RNR_RETRY_COUNT times (the server's, 3 by default) this far apart, so this window (about
     * 250 ms) must outlast the server's reaction, poller stalls such as a GC pause included: with 0.64 ms it
     * was about 2 ms (12 ms on rxe's kernel ticks), and an honest client lost its connection with
     * RNR_RETRY_EXC_ERR. Longer costs nothing otherwise: a peer with credits never meets RNR by itself.
     */
    static final int SHARED_RECEIVE_QUEUE_MIN_RNR_TIMER = 26;

    /**
     * rdma_cm thread, once the QP is in RTS (right after rdma_accept, or on the client's ESTABLISHED):
     * {@link RdmaOption#MIN_RNR_TIMER}, since rdma_cm brought the QP up with 655 ms. A device that refuses it
     * leaves that: the connection works, a peer's RNR retry just waits longer.
     */
    public void applyMinRnrTimer() {
        int code = minRnrTimer(c.config().options().containsKey(RdmaOption.MIN_RNR_TIMER),
                c.config().option(RdmaOption.MIN_RNR_TIMER), c.resources.onSharedReceiveQueue);
        try {
            c.resources.qp.minRnrTimer(code);
        } catch (RuntimeException e) {
            EngineLog.warn(c.description() + ": setting min_rnr_timer " + code + " failed, rdma_cm's 655 ms stays: "
                    + e.getMessage());
        }
    }

    /** The code a QP gets: the option when set, else its default, {@link #SHARED_RECEIVE_QUEUE_MIN_RNR_TIMER} on an SRQ. */
    static int minRnrTimer(boolean set, int option, boolean onSharedReceiveQueue) {
        return set || !onSharedReceiveQueue ? option : SHARED_RECEIVE_QUEUE_MIN_RNR_TIMER;
    }

    /**
     * Poller thread: runs {@code accept} once the peer's hello will find a receive (at once unless this is
     * a server connection on a shared receive queue that must wait for an SRQ receive to be kept for it);
     * if that takes longer than {@code bound}, the connection closes instead (the accept then rejects).
     */
    public void whenPeerHelloCanArrive(Runnable accept, Duration bound) {
        assert OwnerThread.check(c.poller);
        ScheduledFuture<?> timer = EngineTimer.schedule(() -> c.poller.execute(() -> {
            if (!helloReceiveKept) {
                // The close rejects the peer (see UnacceptedRejection) before the id is destroyed.
                c.close(new RdmaException(c.description() + ": no receive of the shared receive queue came free "
                        + "for the peer's hello within " + bound));
            }
        }), bound);
        c.handshake.whenPeerHelloCanArrive(() -> {
            helloReceiveKept = true;
            timer.cancel(false);
            if (c.state() == EngineConnection.State.CONNECTING) {
                // What the handler asked for (and, without credits, the whole window) is posted now, not at
                // the end of this cycle: the accept below runs on the rdma_cm thread, maybe before that.
                c.receive.post();
            }
            accept.run();
        });
    }

    /** Records the peer application's private data (before the connection is handed to the application). */
    public void peerPrivateData(byte[] data) {
        this.peerPrivateData = data;
    }

    /** The peer application's private data (a copy). */
    public byte[] peerPrivateData() {
        return peerPrivateData.clone();
    }

    /** The largest message the peer can receive: its announced receive buffer size, else this side's. */
    public int maxMessageSize() {
        int peer = peerReceiveBufferSize;
        return peer > 0 ? peer : c.config().option(RdmaOption.RECEIVE_BUFFER_SIZE);
    }

    /** The peer's receive buffer size as it announced it, or 0. */
    int peerReceiveBufferSize() {
        return peerReceiveBufferSize;
    }

    public boolean creditFlowControl() {
        return credits;
    }
}
