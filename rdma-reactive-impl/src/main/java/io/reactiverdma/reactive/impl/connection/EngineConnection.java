package io.reactiverdma.reactive.impl.connection;

import reactor.util.annotation.Nullable;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.device.QueuePairOwner;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.verbs.AsyncEventType;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.verbs.CmId;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;

/**
 * One RC connection. Its state (send queue, receive queue, flow control, close sequence) belongs to the
 * poller thread of its completion queue, which alone reads and writes it: other threads hand it work
 * ({@link Operation}s, requests, releases, rdma_cm events, dispose) through the poller's queue, and work
 * started on the poller thread runs inline. No lock is taken on the data path. The rdma_cm thread makes
 * the rdma_cm calls on the id (disconnect, destroying the QP and the id), in order with its events.
 *
 * <h2>Close</h2> {@code CLOSING}: waiting operations fail, the rdma_cm thread moves the QP to ERR, its
 * posted work flushes and each flushed operation fails with {@link ConnectionClosedException}. When nothing
 * is outstanding, or after {@link CloseSequence#DRAIN_TIMEOUT}, or at once when the poller failed (no
 * completion will come): the rdma_cm thread deallocates the memory windows bound to the QP (the credit
 * word's and those of exposed regions: a bound type 2 window holds on to its QP), destroys the QP (after
 * which the device touches none of its buffers) and the id; then, back on the poller thread, what is still
 * pending is failed, receive() gets what arrived before the close and completes, buffers, credit word and
 * CQ reservation go back, CLOSED is emitted and {@link #onDispose()} completes ({@link CloseSequence}).
 *
 * <p>Set-up: {@link PeerAgreement} (what was agreed with the peer), {@link UnacceptedRejection} (a server's
 * close before its accept); completions are routed by {@link ConnectionCompletions}; rdma_cm's events are
 * acted on by {@link ConnectionCmEvents}; events and the end ({@code onDispose()}) are kept by
 * {@link ConnectionEvents}. Poller-owned methods assert they run on the owner thread ({@link OwnerThread}).
 */
public final class EngineConnection implements CompletionTarget, PollerClient, QueuePairOwner {
    enum State { CONNECTING, ESTABLISHED, CLOSING, CLOSED }

    final RdmaCmThread cm;
    final CmId id;
    final ConnectionResources resources;
    public final CompletionPoller poller;
    final EngineMetrics metrics;
    private final String description;
    final FlowControl flow;
    final SendQueue send;
    final ReceiveQueue receive;
    final CreditWordHandshake handshake;
    /** The regions exposed through windows bound to this connection's QP, revoked with it. */
    final ConnectionWindows windows = new ConnectionWindows();
    private final RdmaTransportConfig config;
    private final InetSocketAddress localAddress;
    private final InetSocketAddress remoteAddress;
    private final ConnectionEvents events;
    /** A server connection's reject of its peer when it closes before the accept. */
    final UnacceptedRejection unaccepted;
    final CloseSequence closing = new CloseSequence(this);
    private final ConnectionCompletions routing = new ConnectionCompletions(this);
    /** Set by any thread that asked for the close, so isDisposed() is true right after dispose(). */
    private volatile boolean closeRequested;
    /** What this side agreed with its peer, and the set-up steps that apply it. */
    private final PeerAgreement agreement = new PeerAgreement(this);
    // ---- poller thread only
    private State state = State.CONNECTING;
    /** Written on the poller thread only; volatile because refusals on a subscriber's thread name it too. */
    private volatile Throwable closeCause;
    /** A flush is requested for the end of the poller's cycle (see {@link #flush()}). */
    private boolean flushRequested;
    /** Completions of this connection's work so far: what {@link IdleProbe} watches. */
    private long completions;
    /** Null while not established, or with {@code IDLE_PROBE_INTERVAL} zero. */
    private IdleProbe idleProbe;

    /** Sees every event of this connection (the server forwards them to its own flux). */
    public interface ConnectionEventListener {
        void onEvent(ConnectionEvent e);
    }

    /**
     * Creates the QP on {@code id} (route resolved, or a CONNECT_REQUEST's id) and what it needs, receiving
     * from {@code srq} when not null (a server's shared receive queue on this device). Called on the rdma_cm
     * thread. On failure everything created here is released again.
     */
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
        this.events = new ConnectionEvents(poller);
        this.unaccepted = new UnacceptedRejection(id, remoteAddress, e -> emit(e));
        this.flow = new FlowControl(config.option(RdmaOption.SEND_QUEUE_DEPTH), config.option(RdmaOption.RECEIVE_QUEUE_DEPTH));
        PendingOperations pending = resources.cq.pending;
        this.send = new SendQueue(new SendQueue.Wiring(description, resources.qp, pending, this, poller, this, flow,
                resources.creditWord, resources.inlineLimit, config.option(RdmaOption.SEND_QUEUE_DEPTH),
                config.option(RdmaOption.SIGNAL_INTERVAL), metrics), this::requestFlush, this::close, closing::closedError);
        SharedReceiveMember member = srq == null ? null
                : new SharedReceiveMember(srq, resources.qp, this::close, config.option(RdmaOption.ACCEPT_TIMEOUT));
        ReceiveSource source = member != null ? member : new OwnReceives(description, resources.qp, pending, this,
                poller, flow, metrics, resources.receiveBuffers, config.option(RdmaOption.RECEIVE_BUFFER_SIZE), this::close);
        this.receive = new ReceiveQueue(description, poller, flow, resources.receiveBuffers, source, this::requestFlush);
        this.handshake = new CreditWordHandshake(description, resources.qp, pending, this, poller, metrics, server,
                resources.creditWord, resources.creditWindow, send, member, this::close);
        if (member != null) {
            srq.join(member, description);
        }
        metrics.connections(1);
        device.register(resources.qp.qpNum(), this); // unregistered by this same owner only
        poller.attach(this);
    }

    /** The device resources this connection uses. */
    public DeviceResources device() {
        return resources.device;
    }

    RdmaTransportConfig config() {
        return config;
    }

    public String description() {
        return description;
    }

    int sendDepth() {
        return config.option(RdmaOption.SEND_QUEUE_DEPTH);
    }

    /** What this side agreed with its peer (credits, message size, private data) and the steps applying it. */
    public PeerAgreement agreement() {
        return agreement;
    }

    /** Server, rdma_cm thread: how a close before the accept rejects the peer (see {@link UnacceptedRejection}). */
    public UnacceptedRejection unaccepted() {
        return unaccepted;
    }

    public void setEventListener(ConnectionEventListener listener) {
        events.listener(listener);
    }

    /** The device reported this connection's QP broken (an async event): close with it as the cause. */
    @Override
    public void queuePairFailed(AsyncEventType type) {
        closeFromAnyThread(new ConnectionClosedException(description + ": the device reported " + type.describe()
                + " (async event " + type + ") on its queue pair"));
    }

    /** An async event: the QP (in ERR, on a shared receive queue) consumes no more SRQ receives. */
    @Override
    public void lastWorkRequestReached() {
        poller.execute(receive::lastWorkRequestReached);
    }

    /** Records an event (on the poller thread, so events are emitted by one thread in order). */
    public void emit(ConnectionEvent e) {
        emit(e, true);
    }

    /** {@code forward}: also to the listener (false for an event the listener has published itself). */
    public void emit(ConnectionEvent e, boolean forward) {
        events.emit(e, forward);
    }

    /** rdma_cm events for this connection's id once it is set up (rdma_cm thread): {@link ConnectionCmEvents}. */
    public void onCmEvent(CmEventInfo e) {
        ConnectionCmEvents.on(this, e);
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

    /** Poller thread: one completion of this connection's work (see {@link ConnectionCompletions}). */
    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        assert OwnerThread.check(poller);
        completions++;
        RdmaCompletionException failure = routing.route(p, status, opcode, vendorErr, byteLen, imm, wcFlags);
        if (failure != null) {
            close(failure);
        }
        closing.drained();
    }

    /** Poller thread: an error completion; the close and every flush after it name the first as the cause. */
    void failedWith(RdmaCompletionException failure) {
        if (closeCause == null) {
            closeCause = failure;
        }
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
    void requestFlush() {
        assert OwnerThread.check(poller);
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
        assert OwnerThread.check(poller);
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
        assert OwnerThread.check(poller);
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
        closing.begin();
    }

    @Override
    public void pollerFailed(Throwable cause) {
        close(new ConnectionClosedException(description + ": its completion poller " + poller.name()
                + " failed (" + cause + ")", cause));
        closing.release(); // no completion will come: do not wait for flushes
    }

    /** Poller thread, from the {@link CloseSequence}: the QP and the id are gone. */
    void closed() {
        state = State.CLOSED;
    }

    /** Poller thread, the close sequence's last step: CLOSED, behind every event still queued, then the end. */
    void announceClosed() {
        events.announceClosed(remoteAddress);
    }

    public Flux<ConnectionEvent> events() {
        return events.flux();
    }

    BufferPool memoryPool() {
        return resources.device.pool;
    }

    public InetSocketAddress localAddress() {
        return localAddress;
    }

    public InetSocketAddress remoteAddress() {
        return remoteAddress;
    }

    public Mono<Void> onDispose() {
        return events.onDispose();
    }

    /** Poller thread. */
    State state() {
        return state;
    }

    @Override
    public String toString() {
        return description;
    }
}
