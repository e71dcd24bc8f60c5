package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.device.ControlWords;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WrOpcode;

import reactor.util.annotation.Nullable;

import java.util.function.Consumer;

/**
 * Opens the credit words of a connection with credit flow control, so that neither side writes the other's
 * word before it can be written, and no other connection can ever write it (see docs/flow-control.md,
 * "Opening the credit words").
 *
 * <p>This side's word is reachable through a type 2 memory window bound to this connection's QP (where the
 * device has windows): its rkey is chosen before the connection exists and announced in the private data,
 * but the bind is a send work request, so it can execute only once the QP is in RTS, after the peer may
 * already have learnt the rkey. Each side therefore tells the other when its word is ready with a
 * <em>hello</em>, a 0-byte SEND, and writes the peer's word only after the peer's hello arrived:
 * <ol>
 *   <li>each side posts one buffer-less receive for the peer's hello before anything else on its receive
 *       queue (the server before it accepts, the client before it sends its own hello); a server connection
 *       on a shared receive queue posts none: an SRQ receive is kept for the hello (no credit stands for it),
 *       the server accepts only once it is, and the receive queue hands the first arrival here;</li>
 *   <li>on ESTABLISHED each side posts the bind of its window (if it has one) before anything else;</li>
 *   <li>the client sends its hello once its bind completed; the server once its bind completed and the
 *       client's hello arrived (so the client's hello receive is surely posted: no receiver-not-ready);</li>
 *   <li>a side that received the peer's hello may write the peer's word from then on.</li>
 * </ol>
 * Nothing waits for something that waits for it (the client's hello needs only its own bind; the server's
 * needs its own bind and the client's hello), so the exchange cannot deadlock. The hellos are each side's
 * first receive-consuming messages: messages need credits, and credits come only after the hellos. The bind,
 * the hello and its receive use their own queue slots ({@link #SEND_SLOTS}, {@link #RECEIVE_SLOTS}), outside
 * the user's depths and the credit count.
 *
 * <p>Not thread-safe: the connection's poller thread runs it (asserted: {@link OwnerThread}), except
 * {@link #wordRkey()}.
 */
final class CreditWordHandshake {
    /** Send-queue slots of its own: the bind and the hello. */
    static final int SEND_SLOTS = 2;
    /** Receive-queue slots of its own: the peer's hello. */
    static final int RECEIVE_SLOTS = 1;

    /** One of its work requests, as the pending-operation table names it. */
    enum Step { BIND, HELLO, PEER_HELLO }

    private final String description;
    private final QueuePair qp;
    private final PendingOperations pending;
    private final CompletionTarget target;
    private final CompletionPoller poller;
    private final EngineMetrics metrics;
    private final boolean server;
    private final ControlWords.Slot word;
    /** Null without windows: the word then has a registration of its own. */
    private final MemoryWindow window;
    private final int wordRkey;
    private final SendQueue send;
    /** On a shared receive queue: the membership that recognises the peer's hello; else null. */
    @Nullable
    private final SharedReceiveMember sharedReceive;
    private final Consumer<Throwable> failed;
    private final SendWorkRequests sendWr = new SendWorkRequests(1, 0);
    private final ReceiveWorkRequests receiveWr = new ReceiveWorkRequests(1, 0);
    private boolean active;
    private boolean established;
    /** The connection is closing: nothing more is posted (the QP may be being destroyed on the cm thread). */
    private boolean closing;
    private boolean bound;
    private boolean helloSent;
    private boolean peerHelloReceived;
    /** A server on an SRQ: an SRQ receive is kept for the peer's hello (then it may accept). */
    private boolean peerHelloReceiveKept;
    /** What waits for {@link #peerHelloReceiveKept} (the accept), or null. */
    private Runnable onReceiveKept;
    private long peerWordAddress;
    private int peerWordRkey;
    private int outstanding;

    CreditWordHandshake(String description, QueuePair qp, PendingOperations pending, CompletionTarget target,
            CompletionPoller poller, EngineMetrics metrics, boolean server, ControlWords.Slot word, MemoryWindow window,
            SendQueue send, @Nullable SharedReceiveMember sharedReceive, Consumer<Throwable> failed) {
        this.description = description;
        this.qp = qp;
        this.pending = pending;
        this.target = target;
        this.poller = poller;
        this.metrics = metrics;
        this.server = server;
        this.word = word;
        this.window = window;
        this.wordRkey = window != null ? window.nextRkey() : word.rkey();
        this.send = send;
        this.sharedReceive = sharedReceive;
        this.failed = failed;
    }

    /**
     * Runs {@code r} once the peer's hello will find a receive: at once, except for a server connection on a
     * shared receive queue, whose SRQ receive for the hello may have to wait for a refill (the server
     * accepts only then, so the client's hello never meets an empty SRQ). Poller thread.
     */
    void whenPeerHelloCanArrive(Runnable r) {
        assert OwnerThread.check(poller);
        if (sharedReceive == null || !active || peerHelloReceiveKept) {
            r.run();
        } else {
            onReceiveKept = r;
        }
    }

    /** The rkey the peer writes this side's word with (the window's, once bound). Any thread. */
    int wordRkey() {
        return wordRkey;
    }

    /**
     * Credits were agreed (before ESTABLISHED, before any receive is posted): posts the receive for the peer's
     * hello, and keeps the peer's word until the hello says it may be written. Without credits nothing of
     * this runs: the words are not used.
     */
    void start(long peerAddress, int peerRkey) {
        assert OwnerThread.check(poller);
        active = true;
        peerWordAddress = peerAddress;
        peerWordRkey = peerRkey;
        if (sharedReceive != null) {
            // A server connection on an SRQ has no receive queue of its own: the client's hello lands in an
            // SRQ buffer (one is kept for it, uncredited) and the receive queue hands it here.
            sharedReceive.expectPeerHello(this::peerHelloArrived, this::peerHelloReceiveKept);
            return;
        }
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, Step.PEER_HELLO, -1, System.nanoTime());
        receiveWr.clear();
        receiveWr.add(p.wrId());
        try {
            qp.postReceive(receiveWr);
        } catch (RuntimeException e) {
            pending.free(p);
            failed.accept(new RdmaException(description + ": posting the receive of the peer's hello failed: "
                    + e.getMessage(), e));
            return;
        }
        posted();
    }

    /** The QP is in RTS: bind this side's window before anything else is posted. */
    void established() {
        assert OwnerThread.check(poller);
        if (!active || established) {
            return;
        }
        established = true;
        if (sharedReceive != null) {
            sharedReceive.established(); // the peer's hello is due from now (a bounded wait on an SRQ)
        }
        if (window == null) {
            bound = true;
            maybeSendHello();
            return;
        }
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, Step.BIND, -1, System.nanoTime());
        sendWr.clear();
        window.writeBind(sendWr, p.wrId(), word.registration(), word.incomingAddress(), 8,
                AccessFlags.REMOTE_WRITE);
        if (postSend(p, "the bind of the credit word's window")) {
            posted();
        }
    }

    /** One of its work requests completed (or was flushed); a failed one closes the connection elsewhere. */
    void completed(Step step, boolean success) {
        assert OwnerThread.check(poller);
        outstanding--;
        if (!success) {
            return;
        }
        switch (step) {
            case BIND -> {
                bound = true;
                maybeSendHello();
            }
            case PEER_HELLO -> peerHelloArrived();
            case HELLO -> {
            }
        }
    }

    /** An SRQ receive is kept for the peer's hello: the connection may be accepted. */
    private void peerHelloReceiveKept() {
        peerHelloReceiveKept = true;
        Runnable r = onReceiveKept;
        onReceiveKept = null;
        if (r != null) {
            r.run();
        }
    }

    /** The peer's word may be written from now on; the server answers with its own hello. */
    private void peerHelloArrived() {
        peerHelloReceived = true;
        send.peerCreditWord(peerWordAddress, peerWordRkey); // the next flush writes it when due
        maybeSendHello();
    }

    /** The QP was destroyed before this work request's flush arrived. */
    void abandoned(PendingOperation p) {
        assert OwnerThread.check(poller);
        pending.free(p);
        outstanding--;
        metrics.outstanding(-1);
    }

    int outstanding() {
        return outstanding;
    }

    /** The connection started closing: a bind or peer hello completing after this posts no hello. */
    void close() {
        assert OwnerThread.check(poller);
        closing = true;
    }

    private void maybeSendHello() {
        if (closing || helloSent || !bound || (server && !peerHelloReceived)) {
            return;
        }
        helloSent = true;
        PendingOperation p = pending.acquire(target, OperationType.CREDIT_UPDATE, Step.HELLO, -1, System.nanoTime());
        sendWr.clear();
        sendWr.add(p.wrId(), WrOpcode.SEND, SendFlags.SIGNALED);
        if (postSend(p, "the hello")) {
            posted();
        }
    }

    private boolean postSend(PendingOperation p, String what) {
        try {
            qp.postSend(sendWr);
            return true;
        } catch (RuntimeException e) {
            pending.free(p);
            failed.accept(new RdmaException(description + ": posting " + what + " failed: " + e.getMessage(), e));
            return false;
        }
    }

    private void posted() {
        outstanding++;
        metrics.outstanding(1);
    }
}
