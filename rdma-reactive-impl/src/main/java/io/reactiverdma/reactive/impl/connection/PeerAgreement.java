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
     * rdma_cm thread, once the QP is in RTS (right after rdma_accept, or on the client's ESTABLISHED):
     * {@link RdmaOption#MIN_RNR_TIMER}, since rdma_cm brought the QP up with 655 ms. A device that refuses it
     * leaves that: the connection works, a peer's RNR retry just waits longer.
     */
    public void applyMinRnrTimer() {
        int code = c.config().option(RdmaOption.MIN_RNR_TIMER);
        try {
            c.resources.qp.minRnrTimer(code);
        } catch (RuntimeException e) {
            EngineLog.warn(c.description() + ": setting min_rnr_timer " + code + " failed, rdma_cm's 655 ms stays: "
                    + e.getMessage());
        }
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
