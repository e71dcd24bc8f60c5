package io.reactiverdma.reactive.impl.connection;

import reactor.util.annotation.Nullable;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.CmEvents;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PeerProtocolException;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.verbs.WcStatus;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * One RC connection. Its state (send queue, receive queue, flow control, close sequence) belongs to the
 * poller thread of its completion queue, which alone reads and writes it: other threads hand it work
 * ({@link Operation}s, requests, releases, rdma_cm events, dispose) through the poller's queue, and work
 * started on the poller thread runs inline. No lock is taken on the data path. The rdma_cm thread makes
 * the rdma_cm calls on the id (disconnect, destroying the QP and the id), in order with its events.
 *
 * <h2>Close</h2> {@code CLOSING}: waiting operations fail, the rdma_cm thread moves the QP to ERR, its
 * posted work flushes and each flushed operation fails with {@link ConnectionClosedException}. When nothing
 * is outstanding, or after {@link #DRAIN_TIMEOUT}, or at once when the poller failed (no completion will
 * come): the rdma_cm thread deallocates the memory windows bound to the QP (the credit word's and those of
 * exposed regions: a bound type 2 window holds on to its QP), destroys the QP (after which the device
 * touches none of its buffers) and the id; then, back on the poller thread, what is still pending is failed, receive() gets what arrived before
 * the close and completes, buffers, credit word and CQ reservation go back, CLOSED is emitted and
 * {@link #onDispose()} completes.
 */
public final class EngineConnection implements CompletionTarget, PollerClient {
    static final java.time.Duration DRAIN_TIMEOUT = java.time.Duration.ofSeconds(5);

    enum State { CONNECTING, ESTABLISHED, CLOSING, CLOSED }

    private final RdmaCmThread cm;
    final CmId id;
    private final ConnectionResources resources;
    public final CompletionPoller poller;
    private final EngineMetrics metrics;
    private final String description;
    private final FlowControl flow;
    final SendQueue send;
    final ReceiveQueue receive;
    private final CreditWordHandshake handshake;
    /** The regions exposed through windows bound to this connection's QP, revoked with it. */
    final ConnectionWindows windows = new ConnectionWindows();
    private final RdmaTransportConfig config;
    private final InetSocketAddress localAddress;
    private final InetSocketAddress remoteAddress;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private volatile ConnectionEventListener eventListener;
    /** Set by any thread that asked for the close, so isDisposed() is true right after dispose(). */
    private volatile boolean closeRequested;
    private volatile int peerReceiveBufferSize;
    private volatile boolean credits;
    /** rdma_cm thread only: a server connection's reject for a close before its accept, or null. */
    private byte[] rejectUnaccepted;
    /** The peer application's private data (connect request or accept reply), set before ESTABLISHED. */
    private volatile byte[] peerPrivateData = new byte[0];
    // ---- poller thread only
    private State state = State.CONNECTING;
    /** Written on the poller thread only; volatile because refusals on a subscriber's thread name it too. */
    private volatile Throwable closeCause;
    private boolean releasing;
    /** The peer's hello will find a receive (see {@link #whenPeerHelloCanArrive}). */
    private boolean handshakeReceiveKept;
    /** A flush is requested for the end of the poller's cycle (see {@link #flush()}). */
    private boolean flushRequested;
    private java.util.concurrent.ScheduledFuture<?> drainWatchdog;
    /** This connection's QP as the device's async events see it (unregistered by this same owner only). */
    private final io.reactiverdma.reactive.impl.device.QueuePairOwner qpOwner =
            new io.reactiverdma.reactive.impl.device.QueuePairOwner() {
                @Override
                public void queuePairFailed(io.reactiverdma.verbs.AsyncEventType type) {
                    EngineConnection.this.queuePairFailed(type);
                }

                @Override
                public void lastWorkRequestReached() {
                    poller.execute(receive::lastWorkRequestReached);
                }
            };
    /** Completions of this connection's work so far: what {@link IdleProbe} watches. */
    private long completions;
    /** Null while not established, or with {@code IDLE_PROBE_INTERVAL} zero. */
    private IdleProbe idleProbe;

    /** Sees every event of this connection (the server forwards them to its own flux). */
    public interface ConnectionEventListener {
        void onEvent(ConnectionEvent e);
    }

    /**
     * Creates the QP on {@code id} (route resolved, or a CONNECT_REQUEST's id) and what it needs. Called on
     * the rdma_cm thread. On failure everything created here is released again.
     */
    public EngineConnection(RdmaCmThread cm, CmId id, DeviceResources device, RdmaTransportConfig config, boolean server) {
        this(cm, id, device, config, server, null);
    }

    /** The same, receiving from {@code srq} when not null (a server's shared receive queue on this device). */
    public EngineConnection(RdmaCmThread cm, CmId id, DeviceResources device, RdmaTransportConfig config, boolean server,
            @Nullable SharedReceives srq) {
        this.cm = cm;
        this.id = id;
        this.config = config;
        this.description = (server ? "server" : "client") + " connection " + id.description();
        // Read once here, on the rdma_cm thread: later the id's native memory may be freed under a reader.
        this.localAddress = id.localAddress();
        this.remoteAddress = id.peerAddress();
        this.metrics = EngineMetrics.of(config, device.context().name(), remoteAddress);
        this.resources = new ConnectionResources(id, device, config, metrics, srq);
        this.poller = resources.cq.poller;
        this.flow = new FlowControl(config.option(RdmaOption.SEND_QUEUE_DEPTH), config.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        PendingOperations pending = resources.cq.pending;
        this.send = new SendQueue(new SendQueue.Wiring(description, resources.qp, pending, this, poller, this, flow,
                resources.creditWord, resources.inlineLimit, config.option(RdmaOption.SEND_QUEUE_DEPTH),
                config.option(RdmaOption.SIGNAL_INTERVAL), metrics), this::requestFlush, this::close, this::closedError);
        this.receive = new ReceiveQueue(description, resources.qp, pending, this, poller, flow, metrics,
                resources.receiveBuffers, config.option(RdmaOption.RECEIVE_BUFFER_SIZE), this::requestFlush,
                e -> close(new RdmaException(description + ": ibv_post_recv failed: " + e.getMessage(), e)));
        this.handshake = new CreditWordHandshake(description, resources.qp, pending, this, metrics, server,
                resources.creditWord, resources.creditWindow, send, srq == null ? null : receive, this::close);
        if (srq != null) {
            receive.useShared(srq.join(resources.qp, receive, this::close, config.option(RdmaOption.ACCEPT_TIMEOUT)));
        }
        metrics.connections(1);
        device.register(resources.qp.qpNum(), qpOwner);
        poller.attach(this);
    }

    /** The device resources this connection uses. */
    public DeviceResources device() {
        return resources.device;
    }

    RdmaTransportConfig config() {
        return config;
    }

    /**
     * The client's handle on this connection became unreachable without dispose() (a value Reactor dropped,
     * as a downstream {@code timeout} does with a late connection, or an application that lost it): close it
     * rather than leak its queue pair, buffers and poller. Any thread (the cleaner's).
     */
    void dropped() {
        if (!closeRequested) {
            EngineLog.warn(description + " was dropped without dispose() (for example a timeout after connect() "
                    + "discarded it); closing it");
            closeFromAnyThread(null);
        }
    }

    public String description() {
        return description;
    }

    int sendDepth() {
        return config.option(RdmaOption.SEND_QUEUE_DEPTH);
    }

    // ------------------------------------------------------------------------------------ negotiation
    /** What this side offers in its connect request or accept reply. */
    public Negotiation offer() {
        return new Negotiation(resources.creditsOffered, resources.creditWord.incomingAddress(),
                handshake.wordRkey(), config.option(RdmaOption.RECEIVE_BUFFER_SIZE));
    }

    /**
     * Poller thread: runs {@code accept} once the peer's hello will find a receive (at once unless this is
     * a server connection on a shared receive queue that must wait for an SRQ receive to be kept for it);
     * if that takes longer than {@code bound}, the connection closes instead (the accept then rejects).
     */
    public void whenPeerHelloCanArrive(Runnable accept, java.time.Duration bound) {
        java.util.concurrent.ScheduledFuture<?> timer = EngineTimer.schedule(() -> poller.execute(() -> {
            if (!handshakeReceiveKept) {
                // The close rejects the peer (see rejectUnaccepted) before the id is destroyed.
                close(new RdmaException(description + ": no receive of the shared receive queue came free for the "
                        + "peer's hello within " + bound));
            }
        }), bound);
        handshake.whenPeerHelloCanArrive(() -> {
            handshakeReceiveKept = true;
            timer.cancel(false);
            if (state == State.CONNECTING) {
                // What the handler asked for (and, without credits, the whole window) is posted now, not at
                // the end of this cycle: the accept below runs on the rdma_cm thread, maybe before that.
                receive.post();
            }
            accept.run();
        });
    }

    /**
     * Server, rdma_cm thread, before the accept: if the connection closes before it is accepted, the peer is
     * rejected with {@code data} (once, before the id is destroyed; see {@link #rejectUnaccepted}).
     */
    public void rejectIfClosedBeforeAccept(byte[] data) {
        rejectUnaccepted = data;
    }

    /** Server, rdma_cm thread: the accept is made now; from here on a close disconnects instead. */
    public void accepting() {
        rejectUnaccepted = null;
    }

    /**
     * rdma_cm thread: a server connection that closed before it was accepted rejects its peer now, while its
     * id still exists (the close's disconnect and the accept decision both come here; the first does it), and
     * the server's events get REJECTED.
     */
    public void rejectUnaccepted() {
        byte[] data = rejectUnaccepted;
        if (data == null) {
            return;
        }
        rejectUnaccepted = null;
        try {
            id.reject(data);
        } catch (RuntimeException gaveUp) {
            return; // the peer gave up already: it sees its own timeout
        }
        emit(new ConnectionEvent(ConnectionEvent.Type.REJECTED, 0, data, remoteAddress));
    }

    /**
     * rdma_cm thread, once the QP is in RTS (right after rdma_accept, or on the client's ESTABLISHED):
     * {@link RdmaOption#MIN_RNR_TIMER}, since rdma_cm brought the QP up with 655 ms. A device that refuses it
     * leaves that: the connection works, a peer's RNR retry just waits longer.
     */
    public void applyMinRnrTimer() {
        int code = config.option(RdmaOption.MIN_RNR_TIMER);
        try {
            resources.qp.minRnrTimer(code);
        } catch (RuntimeException e) {
            EngineLog.warn(description + ": setting min_rnr_timer " + code + " failed, rdma_cm's 655 ms stays: "
                    + e.getMessage());
        }
    }

    /** Applies the peer's offer (null: a plain peer, nothing negotiated). Before ESTABLISHED; any thread. */
    public void applyPeerOffer(Negotiation peer) {
        boolean agreed = peer != null && resources.creditsOffered && peer.credits();
        peerReceiveBufferSize = peer == null ? 0 : peer.receiveBufferSize();
        credits = agreed;
        poller.run(() -> {
            flow.useCredits(agreed);
            if (agreed) {
                handshake.start(peer.creditAddress(), peer.creditRkey());
            } else {
                requestFlush(); // no credits: the receive window is posted ahead of demand (see FlowControl)
            }
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

    public void setEventListener(ConnectionEventListener listener) {
        this.eventListener = listener;
    }

    // -------------------------------------------------------------------------------------- rdma_cm
    /** The device reported this connection's QP broken (an async event): close with it as the cause. */
    private void queuePairFailed(io.reactiverdma.verbs.AsyncEventType type) {
        closeFromAnyThread(new ConnectionClosedException(description + ": the device reported " + type.describe()
                + " (async event " + type + ") on its queue pair"));
    }

    /** Records an event (on the poller thread, so events are emitted by one thread in order). */
    public void emit(ConnectionEvent e) {
        emit(e, true);
    }

    /** {@code forward}: also to the listener (false for an event the listener has published itself). */
    public void emit(ConnectionEvent e, boolean forward) {
        poller.run(() -> emitNow(e, forward));
    }

    /** Poller thread. */
    private void emitNow(ConnectionEvent e, boolean forward) {
        events.tryEmitNext(e);
        ConnectionEventListener l = eventListener;
        if (forward && l != null) {
            l.onEvent(e);
        }
    }

    /** rdma_cm events for this connection's id once it is set up (rdma_cm thread). */
    public void onCmEvent(io.reactiverdma.reactive.impl.verbs.CmEventInfo e) {
        emit(new ConnectionEvent(CmEvents.map(e.type()), e.status(), e.privateDataTrimmed(), remoteAddress));
        switch (e.type()) {
            case ESTABLISHED -> established(null, null);
            case DISCONNECTED -> closeFromAnyThread(null);
            case DEVICE_REMOVAL -> {
                closeFromAnyThread(new ConnectionClosedException(description + ": the RDMA device was removed"));
                resources.device.removed();
            }
            case REJECTED, UNREACHABLE, CONNECT_ERROR -> closeFromAnyThread(new ConnectionClosedException(
                    description + ": connection failed: " + e));
            default -> {
            }
        }
    }

    /**
     * The connection is up: post what waited for it, then run {@code then} (on the poller thread); if it
     * started closing before this ran, run {@code closedMeanwhile} instead.
     */
    public void established(Runnable then, Runnable closedMeanwhile) {
        poller.run(() -> {
            if (state == State.CONNECTING) {
                state = State.ESTABLISHED;
                handshake.established(); // the bind of this side's credit window goes first
                send.established(); // the flush at the end of this cycle posts receives, credits and sends
                idleProbe = IdleProbe.start(poller, send, () -> completions,
                        config.option(RdmaOption.IDLE_PROBE_INTERVAL), description, this::close);
            }
            if (state == State.ESTABLISHED) {
                if (then != null) {
                    then.run();
                }
            } else if (closedMeanwhile != null) {
                closedMeanwhile.run(); // closing already (its poller failed, the peer went away): no hand-over
            }
        });
    }

    // ------------------------------------------------------------------------------------- operations
    /** Why the connection closed (null: a plain close, or not closed); any thread. */
    public Throwable closeCause() {
        return closeCause;
    }

    /**
     * Whether {@code error}, which ended something of this connection (a server handler), only says that the
     * connection closed without a failure: closing now or closed, on dispose() or the peer's disconnect, with
     * no cause (an error completion, a broken queue pair, a removed device or a protocol violation is one).
     * Any thread.
     */
    public boolean closedInOrder(Throwable error) {
        return error instanceof ConnectionClosedException && closeRequested && closeCause == null;
    }

    ConnectionClosedException closedError(String what) {
        Throwable cause = closeCause;
        return cause != null
                ? new ConnectionClosedException(description + " is closed: operation " + what, cause)
                : new ConnectionClosedException(description + " is closed: operation " + what);
    }

    // ------------------------------------------------------------------------------------ completions
    /** Poller thread: one completion of this connection's work. */
    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        completions++;
        OperationType type = p.type;
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        RdmaCompletionException failure = null;
        if (!success && !flushed) {
            failure = new RdmaCompletionException(type, status, WcStatus.of(status).name(), vendorErr,
                    p.operation == PostedRequests.PROBE ? description + " (its idle probe, a zero-length RDMA WRITE posted "
                            + "after " + config.option(RdmaOption.IDLE_PROBE_INTERVAL) + " without traffic)" : description);
            metrics.completionError(WcStatus.of(status).name());
            if (p.operation == PostedRequests.PROBE) {
                // Nobody else would hear of it (nothing of the user's was outstanding): say why it closes.
                EngineLog.warn(description + ": its idle probe was not acknowledged (" + WcStatus.of(status).name()
                        + "); the peer is gone, closing");
            }
            if (closeCause == null) {
                closeCause = failure; // the close below and every flush after it name this as the cause
            }
        }
        if (p.operation instanceof CreditWordHandshake.Step step) {
            long latencyNs = System.nanoTime() - p.postedNs;
            resources.cq.pending.free(p);
            metrics.outstanding(-1);
            metrics.completed(type, success, flushed, latencyNs, 0);
            handshake.completed(step, success);
        } else if (type == OperationType.RECEIVE) {
            int receiveIndex = p.receiveIndex;
            long latencyNs = System.nanoTime() - p.postedNs;
            resources.cq.pending.free(p);
            metrics.outstanding(-1);
            metrics.completed(type, success, flushed, latencyNs, success ? byteLen : 0);
            receive.completed(receiveIndex, success, opcode, byteLen, imm, wcFlags);
        } else {
            send.completed(p, success, flushed, failure); // and the unsignalled requests posted before it
        }
        if (failure != null) {
            close(failure);
        }
        drained();
    }

    @Override
    public void completionHandlingFailed(PendingOperation p, long wrId, Throwable error) {
        // A send entry is finished by the send queue's ring walk (or by the close's flush or abandonment),
        // never freed here: the ring still holds it. A receive entry may still be in use.
        if (p.type == OperationType.RECEIVE) {
            resources.cq.pending.freeIfCurrent(p, wrId);
        }
        close(new RdmaException(description + ": handling a completion failed: " + error, error));
    }

    /** Poller thread: the send or receive queue has work for the end of this cycle. */
    private void requestFlush() {
        if (!flushRequested) {
            flushRequested = true;
            poller.requestFlush(this);
        }
    }

    /**
     * Poller thread, end of a duty cycle: receives for new demand and returned buffers as one
     * {@code ibv_post_recv}, then the credit update (if due) and every ready send-queue request as one
     * {@code ibv_post_send}.
     */
    @Override
    public int flush() {
        flushRequested = false;
        if (state == State.CONNECTING) {
            // Receives are legal in INIT/RTR, and a server must have them posted before it accepts: a peer
            // without credits may send as soon as it sees ESTABLISHED, before this side's ESTABLISHED arrives.
            // Sends wait for ESTABLISHED (send.established() asks for the flush that posts them).
            receive.post();
            return 0;
        }
        if (state != State.ESTABLISHED) {
            return 0;
        }
        receive.post();
        return send.flush();
    }

    @Override
    public int recheckCredits() {
        return send.recheckCredits();
    }

    // ------------------------------------------------------------------------------------------ close
    public void dispose() {
        closeFromAnyThread(null);
    }

    public void closeFromAnyThread(Throwable cause) {
        closeRequested = true;
        poller.run(() -> close(cause));
    }

    public boolean isDisposed() {
        return closeRequested;
    }

    /** Poller thread: starts closing (idempotent; the first cause is kept). */
    void close(Throwable cause) {
        if (closeCause == null) {
            closeCause = cause;
        }
        if (state == State.CLOSING || state == State.CLOSED) {
            return;
        }
        if (state == State.ESTABLISHED && flushRequested && closeCause == null) {
            // Work handed over before the close but not posted yet (it waits for the end of this cycle's
            // flush) is posted first, as it was before doorbell batching: the close is ordered after it, and
            // it completes or is flushed like any posted work instead of failing "not posted".
            flush();
            if (state != State.ESTABLISHED) {
                return; // the flush's post was refused, and that refusal closed the connection already
            }
        }
        state = State.CLOSING;
        closeRequested = true;
        if (idleProbe != null) {
            idleProbe.stop();
        }
        send.close();
        receive.close();
        handshake.close();
        cm.execute(this::disconnect);
        drainWatchdog = EngineTimer.schedule(() -> poller.execute(this::drainTimedOut), DRAIN_TIMEOUT);
        drained();
    }

    /** rdma_cm thread: move the QP to ERR so everything posted flushes. */
    private void disconnect() {
        rejectUnaccepted();
        try {
            id.disconnect();
        } catch (RuntimeException notConnected) {
            // Never connected (or the peer is gone): flush the QP ourselves.
            try {
                resources.qp.toError();
            } catch (RuntimeException e) {
                EngineLog.debug(description + ": moving the QP to ERR failed: " + e);
            }
        }
    }

    /** Poller thread: once nothing is outstanding any more, the release starts. */
    private void drained() {
        if (state == State.CLOSING && !releasing && send.outstanding() == 0 && receive.outstanding() == 0
                && handshake.outstanding() == 0) {
            release();
        }
    }

    private void drainTimedOut() {
        if (state != State.CLOSING || releasing) {
            return;
        }
        EngineLog.warn(description + ": " + (send.outstanding() + receive.outstanding()) + " work requests not flushed"
                + " within " + DRAIN_TIMEOUT + "; destroying the QP and failing them");
        release();
    }

    @Override
    public void pollerFailed(Throwable cause) {
        close(new ConnectionClosedException(description + ": its completion poller " + poller.name()
                + " failed (" + cause + ")", cause));
        release(); // no completion will come: do not wait for flushes
    }

    /**
     * Poller thread: the rdma_cm thread destroys the QP and the id; then, back here, what is still pending
     * (flushes that never came) fails and everything else is given back.
     */
    private void release() {
        if (releasing) {
            return;
        }
        releasing = true;
        if (drainWatchdog != null) {
            drainWatchdog.cancel(false);
        }
        Runnable destroy = () -> {
            rejectUnaccepted(); // a release without the close's disconnect (its poller failed)
            cm.unregister(id);
            resources.deallocateWindow();
            windows.deallocateAll();
            try {
                id.destroyQueuePair();
            } catch (RuntimeException e) {
                EngineLog.error(description + ": rdma_destroy_qp failed", e);
            }
            try {
                id.close();
            } catch (RuntimeException e) {
                EngineLog.error(description + ": rdma_destroy_id failed", e);
            }
            poller.execute(this::finish);
        };
        if (receive.isShared()) {
            // On a shared receive queue the QP (in ERR: the disconnect was queued before) is destroyed only once
            // it consumes no more SRQ receives and the completions of those it did are polled: mlx providers
            // drop a destroyed QP's unpolled completions, and their SRQ receives with them.
            cm.execute(() -> poller.execute(() -> receive.beforeDestroy(() -> cm.execute(destroy))));
        } else {
            cm.execute(destroy);
        }
    }

    /** Poller thread, after the QP and the id are gone. */
    private void finish() {
        send.abandonPosted();
        for (PendingOperation p : resources.cq.pending.snapshotInUse()) {
            if (p.connection == this) {
                if (p.operation instanceof CreditWordHandshake.Step) {
                    handshake.abandoned(p);
                } else if (p.type == OperationType.RECEIVE) {
                    receive.abandonPosted(p);
                }
            }
        }
        state = State.CLOSED;
        Throwable cause = closeCause;
        // A peer that broke the protocol: the handler's receive() says how (PeerProtocolException).
        boolean failed = cause instanceof RdmaCompletionException || cause instanceof PeerProtocolException
                || poller.failure() != null;
        receive.finish(failed ? cause : null);
        windows.endAll();
        resources.device.unregister(resources.qp.qpNum(), qpOwner);
        resources.release();
        poller.detach(this);
        metrics.connections(-1);
        // Behind every event still queued for emission (run() never overtakes them), then the end.
        poller.run(() -> {
            emitNow(new ConnectionEvent(ConnectionEvent.Type.CLOSED, 0, null, remoteAddress), true);
            events.tryEmitComplete();
            disposed.tryEmitEmpty();
        });
    }

    // ------------------------------------------------------------------------------------------ views
    public Flux<ConnectionEvent> events() {
        return events.asFlux();
    }

    public RdmaMemory memory() {
        return resources.device.pool;
    }

    BufferPool memoryPool() {
        return resources.device.pool;
    }

    public int maxMessageSize() {
        int peer = peerReceiveBufferSize;
        return peer > 0 ? peer : config.option(RdmaOption.RECEIVE_BUFFER_SIZE);
    }

    /** The peer's receive buffer size as it announced it, or 0. */
    int peerReceiveBufferSize() {
        return peerReceiveBufferSize;
    }

    public boolean creditFlowControl() {
        return credits;
    }

    public InetSocketAddress localAddress() {
        return localAddress;
    }

    public InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    /** For tests: operations waiting for a slot or a credit (read on the poller thread). */
    int waitingCount() {
        return send.waitingCount();
    }

    /** For tests (poller thread). */
    State state() {
        return state;
    }

    @Override
    public String toString() {
        return description;
    }
}
