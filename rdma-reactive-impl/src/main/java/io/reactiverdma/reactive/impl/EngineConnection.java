package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEvent;
import io.reactiverdma.cm.RdmaCmId;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.QpInitAttributes;
import io.reactiverdma.verbs.QueuePair;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One RC connection: its queue pair (created on the rdma_cm id), its receive buffers, the queue of
 * operations waiting for a send slot or a credit, and the flow-control state. All mutable state is
 * guarded by {@link #lock}; signals to subscribers are emitted outside it.
 *
 * <h2>Send queue</h2> {@code SEND_QUEUE_DEPTH} slots for user operations plus one reserved for this side's
 * credit update, so flow control never waits behind user work. An operation that finds no slot (or, with
 * credits, no credit) waits in {@link #waiting}, in order; completions free slots and drain it.
 *
 * <h2>Credits</h2> When both sides agreed on them, each side RDMA-WRITEs the running total of receives it
 * has posted into the peer's credit word ({@link ControlWords}); a sender may have at most that many
 * messages (SEND, SEND_WITH_IMM, WRITE_WITH_IMM) sent in total, so a message always finds a posted receive
 * and no RNR retry happens. The write consumes no receive at the peer, so updates cannot deadlock.
 *
 * <h2>Close</h2> {@code CLOSING}: waiting operations fail, the QP goes to ERR (rdma_disconnect), its
 * posted work flushes and each flushed operation fails with {@link ConnectionClosedException}. When nothing
 * is outstanding, {@code CLOSED} ({@link #finishClose}): receive() completes after the messages that
 * arrived before the close, the QP is destroyed, free receive buffers go back to the pool (the others when
 * their messages are released), then the id, the credit word and the CQ reservation. If flushes do not all
 * arrive within {@link #DRAIN_TIMEOUT}, the QP is destroyed first and what is left is failed.
 */
final class EngineConnection implements RdmaConnection, CompletionTarget {
    static final int STILL_WAITING = 0;
    static final int PROGRESSED = 1;
    static final int DONE = 2;
    static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(5);

    enum State { CONNECTING, ESTABLISHED, CLOSING, CLOSED }

    private final CmEventLoop cm;
    final RdmaCmId id;
    /** Both set once established (on the rdma_cm thread), so they outlive the cm id. */
    private volatile InetSocketAddress localAddress;
    private volatile InetSocketAddress remoteAddress;
    private final DeviceResources device;
    private final CompletionQueueHandle cqh;
    private final QueuePair qp;
    private final EngineMetrics metrics;
    private final Scheduler callbacks;
    private final String description;
    private final int sendDepth;
    private final int recvDepth;
    private final int recvBufferSize;
    private final int inlineLimit;
    private final boolean creditsOffered;
    private final int cqEntries;

    private final Object lock = new Object();
    private final FlowControl flow;
    private State state = State.CONNECTING;
    private Throwable closeCause;
    private int outstanding;

    // ---- send side (guarded by lock)
    private final SendWorkRequests sendWr = new SendWorkRequests(1, 1);
    private final ArrayDeque<Operation> waiting = new ArrayDeque<>();
    private long peerCreditAddress;
    private int peerCreditRkey;
    private int peerReceiveBufferSize;
    private boolean creditWaitRegistered;
    private final ControlWords.Slot creditWord;

    // ---- receive side (guarded by lock)
    private final ReceiveWorkRequests recvWr;
    private final PendingOperation[] recvBatch;
    private final EngineBuffer[] recvBuffers;
    private final EngineMessage[] messages;
    private final int[] freeRecv;
    private int freeRecvCount;
    private final ArrayDeque<EngineMessage> undelivered = new ArrayDeque<>();
    private FluxSink<RdmaMessage> receiver;
    private boolean delivering;
    private boolean receiveFailed;

    private final Sinks.Many<ConnectionEvent> events = Sinks.many().replay().all();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private final AtomicBoolean closeStarted = new AtomicBoolean();
    private final AtomicBoolean finished = new AtomicBoolean();
    private boolean qpDestroyed; // rdma_cm thread only
    private volatile ConnectionEventListener eventListener;

    /** Sees every event of this connection (the server forwards them to its own flux). */
    interface ConnectionEventListener {
        void onEvent(ConnectionEvent e);
    }

    /**
     * Creates the QP on {@code id} (route resolved, or a CONNECT_REQUEST's id) and the receive buffers.
     * Called on the rdma_cm thread. On failure everything created here is released again.
     */
    EngineConnection(CmEventLoop cm, RdmaCmId id, DeviceResources device,
            RdmaTransportConfig config, boolean server) {
        this.cm = cm;
        this.id = id;
        this.device = device;
        this.metrics = EngineMetrics.of(config, device, id);
        this.callbacks = config.callbackScheduler();
        this.sendDepth = config.option(RdmaOption.SEND_QUEUE_DEPTH);
        this.recvDepth = config.option(RdmaOption.RECEIVE_QUEUE_DEPTH);
        this.recvBufferSize = config.option(RdmaOption.RECEIVE_BUFFER_SIZE);
        this.description = (server ? "server" : "client") + " connection " + id.description();
        int sqDepth = sendDepth + 1; // + the credit update's own slot
        this.cqEntries = sqDepth + recvDepth;
        this.cqh = device.acquireCq(config, cqEntries, metrics);
        QueuePair q = null;
        ControlWords.Slot word = null;
        EngineBuffer[] buffers = new EngineBuffer[recvDepth];
        try {
            int askInline = Math.max(config.option(RdmaOption.MAX_INLINE_DATA), 8);
            q = id.createQueuePair(device.pd, QpInitAttributes.rc(cqh.cq).maxSendWr(sqDepth).maxRecvWr(recvDepth)
                    .maxSendSge(1).maxRecvSge(1).maxInlineData(askInline));
            int grantedInline = q.capabilities().maxInlineData();
            this.inlineLimit = Math.min(config.option(RdmaOption.MAX_INLINE_DATA), grantedInline);
            // Credit updates are 8-byte inline WRITEs: inline means the value is copied at post time, so a
            // later update never races the device reading an earlier one.
            this.creditsOffered = config.option(RdmaOption.CREDIT_FLOW_CONTROL) && grantedInline >= 8;
            word = device.controlWords.allocate();
            for (int i = 0; i < recvDepth; i++) {
                buffers[i] = device.pool.allocatePooled(recvBufferSize);
            }
        } catch (RuntimeException e) {
            for (EngineBuffer b : buffers) {
                if (b != null) {
                    b.release();
                }
            }
            if (word != null) {
                device.controlWords.free(word);
            }
            if (q != null) {
                id.destroyQueuePair();
            }
            device.releaseCq(cqh, cqEntries);
            throw e;
        }
        this.qp = q;
        this.creditWord = word;
        this.recvBuffers = buffers;
        this.messages = new EngineMessage[recvDepth];
        this.freeRecv = new int[recvDepth];
        for (int i = 0; i < recvDepth; i++) {
            messages[i] = new EngineMessage(this, i, buffers[i]);
            freeRecv[i] = recvDepth - 1 - i;
        }
        this.freeRecvCount = recvDepth;
        this.recvWr = new ReceiveWorkRequests(recvDepth, 1);
        this.recvBatch = new PendingOperation[recvDepth];
        this.flow = new FlowControl(sendDepth, recvDepth);
        metrics.connections(1);
    }

    // ------------------------------------------------------------------------------------ negotiation
    /** What this side offers in its connect request or accept reply. */
    Negotiation offer() {
        return new Negotiation(creditsOffered, creditWord.incomingAddress(), creditWord.rkey(), recvBufferSize);
    }

    /** Applies the peer's offer (null: a plain peer, nothing negotiated). Before ESTABLISHED. */
    void applyPeerOffer(Negotiation peer) {
        synchronized (lock) {
            if (peer == null) {
                flow.useCredits(false);
                peerReceiveBufferSize = 0;
                return;
            }
            peerReceiveBufferSize = peer.receiveBufferSize();
            flow.useCredits(creditsOffered && peer.credits());
            peerCreditAddress = peer.creditAddress();
            peerCreditRkey = peer.creditRkey();
        }
    }

    void setEventListener(ConnectionEventListener listener) {
        this.eventListener = listener;
    }

    // -------------------------------------------------------------------------------------- rdma_cm
    /** Records an event (before or after ESTABLISHED). */
    void emit(ConnectionEvent e) {
        events.tryEmitNext(e);
        ConnectionEventListener l = eventListener;
        if (l != null) {
            l.onEvent(e);
        }
    }

    /** rdma_cm events for this connection's id once it is set up (rdma_cm thread). */
    void onCmEvent(CmEvent e) {
        ConnectionEvent.Type type = RdmaEngine.map(e.type());
        emit(new ConnectionEvent(type, e.status(), e.privateDataTrimmed(), remoteAddressOrNull()));
        switch (e.type()) {
            case ESTABLISHED -> established();
            case DISCONNECTED -> close(null);
            case DEVICE_REMOVAL -> close(new ConnectionClosedException(description + ": the RDMA device was removed"));
            case REJECTED, UNREACHABLE, CONNECT_ERROR -> close(new ConnectionClosedException(
                    description + ": connection failed: " + e));
            default -> {
            }
        }
    }

    /** The connection is up: drain what waited for it and advertise the receives posted so far. */
    void established() {
        // Kept for after close: onDispose handlers and logs still want to say which connection it was.
        localAddress = id.localAddress();
        remoteAddress = remoteAddressOrNull();
        synchronized (lock) {
            if (state != State.CONNECTING) {
                return;
            }
            state = State.ESTABLISHED;
            drainLocked();
            maybeAdvertiseLocked();
        }
        flushDeferred();
    }

    // ------------------------------------------------------------------------------------- operations
    @Override
    public Mono<Void> send(ByteBuffer data) {
        return sendCopy(OperationType.SEND, data, 0);
    }

    @Override
    public Mono<Void> sendWithImmediate(ByteBuffer data, int immediate) {
        return sendCopy(OperationType.SEND_WITH_IMMEDIATE, data, immediate);
    }

    /** A message from heap or direct bytes: copied at subscription into a pooled registered buffer. */
    private Mono<Void> sendCopy(OperationType type, ByteBuffer data, int immediate) {
        Objects.requireNonNull(data, "data");
        return Mono.<Object>create(sink -> {
            int n = data.remaining();
            checkMessageSize(n);
            EngineBuffer copy = device.pool.allocatePooled(Math.max(n, 1));
            copy.buffer().put(data.duplicate());
            copy.retain();
            submit(new Operation(type, sink, copy, true, n, 0, 0, 0, 0, immediate));
        }).then().transform(this::onCallbacks);
    }

    @Override
    public Mono<Void> send(RegisteredBuffer data) {
        Objects.requireNonNull(data, "data");
        return Mono.<Object>create(sink -> {
            EngineBuffer b = local(data, "data");
            checkMessageSize(b.length());
            hold(b);
            submit(new Operation(OperationType.SEND, sink, b, false, b.length(), 0, 0, 0, 0, 0));
        }).then().transform(this::onCallbacks);
    }

    @Override
    public Mono<Void> send(Publisher<ByteBuffer> messages) {
        Objects.requireNonNull(messages, "messages");
        // flatMap with concurrency = the send queue depth: upstream is asked for one more message per
        // completed send, so at most SEND_QUEUE_DEPTH are in flight or waiting (for a slot or a credit).
        // Inner sends subscribe in arrival order, so they are posted in order.
        return Flux.from(messages).flatMap(this::send, sendDepth, 1).then();
    }

    @Override
    public Mono<Void> write(RegisteredBuffer local, RemoteRegion remote) {
        return oneSided(OperationType.WRITE, local, remote, 0);
    }

    @Override
    public Mono<Void> writeWithImmediate(RegisteredBuffer local, RemoteRegion remote, int immediate) {
        return oneSided(OperationType.WRITE_WITH_IMMEDIATE, local, remote, immediate);
    }

    @Override
    public Mono<Void> read(RegisteredBuffer local, RemoteRegion remote) {
        return oneSided(OperationType.READ, local, remote, 0);
    }

    private Mono<Void> oneSided(OperationType type, RegisteredBuffer local, RemoteRegion remote, int immediate) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
        return Mono.<Object>create(sink -> {
            EngineBuffer b = local(local, "local");
            if (b.length() > remote.length()) {
                throw new InvalidRequestException(InvalidRequestException.Reason.OUTSIDE_REGION,
                        type + " of " + b.length() + " bytes does not fit the " + remote.length() + "-byte " + remote);
            }
            hold(b);
            submit(new Operation(type, sink, b, false, b.length(), remote.address(), remote.rkey(), 0, 0, immediate));
        }).then().transform(this::onCallbacks);
    }

    @Override
    public Mono<Long> compareAndSwap(RemoteRegion remote, long expect, long swap) {
        return atomic(OperationType.COMPARE_AND_SWAP, remote, expect, swap);
    }

    @Override
    public Mono<Long> fetchAndAdd(RemoteRegion remote, long delta) {
        return atomic(OperationType.FETCH_AND_ADD, remote, delta, 0);
    }

    private Mono<Long> atomic(OperationType type, RemoteRegion remote, long compareAdd, long swap) {
        Objects.requireNonNull(remote, "remote");
        return Mono.<Object>create(sink -> {
            if (remote.length() != 8) {
                throw new InvalidRequestException(InvalidRequestException.Reason.WRONG_ATOMIC_SIZE,
                        type + " needs an 8-byte remote region, got " + remote.length() + " bytes (" + remote + ")");
            }
            if ((remote.address() & 7) != 0) {
                throw new InvalidRequestException(InvalidRequestException.Reason.MISALIGNED_ATOMIC,
                        type + " needs an 8-byte aligned remote address, got 0x" + Long.toHexString(remote.address()));
            }
            EngineBuffer result = device.pool.allocatePooled(8);
            result.retain();
            submit(new Operation(type, sink, result, true, 8, remote.address(), remote.rkey(), compareAdd, swap, 0));
        }).map(Long.class::cast).transform(this::onCallbacks);
    }

    private <T> Mono<T> onCallbacks(Mono<T> m) {
        return callbacks == null ? m : m.publishOn(callbacks);
    }

    private void checkMessageSize(int n) {
        int max = maxMessageSize();
        if (n > max) {
            throw new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                    "a " + n + "-byte message does not fit the receiver's " + max + "-byte receive buffers ("
                            + (peerReceiveBufferSize() > 0 ? "as the peer announced" : "this side's RECEIVE_BUFFER_SIZE; "
                            + "the peer did not announce its own") + ")");
        }
    }

    private EngineBuffer local(RegisteredBuffer buffer, String what) {
        if (!(buffer instanceof EngineBuffer b)) {
            throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER,
                    what + " was not made by this engine's RdmaMemory: " + buffer.getClass().getName());
        }
        if (b.pool() != device.pool) {
            throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER,
                    what + " is registered on another device (" + b.pool() + ") than this connection's ("
                            + device.pool + ")");
        }
        if (b.isReleased()) {
            throw EngineBuffer.released();
        }
        return b;
    }

    private static void hold(EngineBuffer b) {
        if (!b.retain()) {
            throw EngineBuffer.released();
        }
    }

    /** Queues the operation and posts what can be posted; a closed connection fails it at once. */
    private void submit(Operation op) {
        op.sink.onCancel(() -> cancel(op));
        synchronized (lock) {
            if (state == State.CLOSING || state == State.CLOSED) {
                deferred.add(op);
                deferredErrors.add(closedError("refused"));
            } else {
                waiting.add(op);
                if (state == State.ESTABLISHED) {
                    drainLocked();
                }
            }
        }
        flushDeferred();
    }

    /**
     * The subscriber cancelled (or a {@code timeout} fired). Not yet posted: the operation leaves the queue
     * and drops its holds now. Posted: it stays in the pending table, and its holds are dropped only by its
     * completion or flush, because the device may still read or write its buffer until then.
     */
    private void cancel(Operation op) {
        op.cancelled = true;
        boolean removed;
        synchronized (lock) {
            removed = waiting.remove(op);
        }
        if (removed) {
            op.releaseHolds();
        }
    }

    // ---- failures found under the lock are signalled after it (user code never runs under our lock)
    private final ArrayDeque<Operation> deferred = new ArrayDeque<>();
    private final ArrayDeque<Throwable> deferredErrors = new ArrayDeque<>();

    private void flushDeferred() {
        while (true) {
            Operation op;
            Throwable error;
            synchronized (lock) {
                op = deferred.poll();
                error = deferredErrors.poll();
            }
            if (op == null) {
                return;
            }
            op.fail(error); // only refusals are deferred: every entry has its error
        }
    }

    private ConnectionClosedException closedError(String what) {
        Throwable cause = closeCause;
        return cause != null
                ? new ConnectionClosedException(description + " is closed: operation " + what, cause)
                : new ConnectionClosedException(description + " is closed: operation " + what);
    }

    /**
     * Posts waiting operations while slots and credits allow. Under lock, state ESTABLISHED. True when the
     * head waits for the peer's credits (the poller then re-reads the credit word for this connection).
     */
    private boolean drainLocked() {
        while (state == State.ESTABLISHED && !waiting.isEmpty()) {
            Operation op = waiting.peek();
            if (op.cancelled) {
                waiting.poll();
                op.releaseHolds();
                continue;
            }
            switch (flow.blocked(op.consumesPeerReceive(), creditWord.incoming())) {
                case SLOT:
                    return false; // a send completion drains again
                case CREDIT:
                    if (!creditWaitRegistered) {
                        creditWaitRegistered = true;
                        metrics.creditsWaiting(1);
                        cqh.poller.awaitCredits(this);
                    }
                    return true;
                default:
                    waiting.poll();
                    postLocked(op);
            }
        }
        return false;
    }

    /**
     * Poller thread, while this connection waits for credits: the peer's credit word may have moved.
     * {@link #STILL_WAITING} keeps the poller's entry (one per connection); otherwise it is dropped.
     */
    int recheckCredits() {
        synchronized (lock) {
            if (state != State.ESTABLISHED) {
                creditWaitRegistered = false;
                metrics.creditsWaiting(-1);
                return DONE;
            }
            if (flow.creditsLeft(creditWord.incoming()) <= 0 || drainLocked()) {
                return STILL_WAITING;
            }
            creditWaitRegistered = false;
            metrics.creditsWaiting(-1);
        }
        flushDeferred();
        return PROGRESSED;
    }

    private void postLocked(Operation op) {
        PendingOperation p = cqh.pending.acquire(this, op.type, op, -1, System.nanoTime());
        sendWr.clear();
        boolean inline = op.writeWorkRequest(sendWr, p.wrId(), inlineLimit);
        try {
            qp.postSend(sendWr);
        } catch (RuntimeException e) {
            cqh.pending.free(p);
            deferred.add(op);
            deferredErrors.add(new io.reactiverdma.reactive.RdmaException(description + ": posting " + op.type
                    + " failed: " + e.getMessage(), e));
            return;
        }
        flow.posted(op.consumesPeerReceive());
        outstanding++;
        metrics.outstanding(1);
        if (inline) {
            // The device copied the bytes at post time: the buffer is free now (the op keeps no hold).
            op.releaseHolds();
        }
    }

    // ---------------------------------------------------------------------------------------- receive
    @Override
    public Flux<RdmaMessage> receive() {
        Flux<RdmaMessage> flux = Flux.create(sink -> {
            synchronized (lock) {
                if (receiver != null) {
                    sink.error(new IllegalStateException(description + ": receive() already has a subscriber"));
                    return;
                }
                receiver = sink;
                flow.cancelDemand();
            }
            sink.onRequest(this::requestReceives);
            sink.onCancel(() -> {
                List<EngineMessage> drop = null;
                synchronized (lock) {
                    if (receiver == sink) {
                        receiver = null;
                        flow.cancelDemand();
                        if (state == State.CLOSED && !undelivered.isEmpty()) {
                            drop = new ArrayList<>(undelivered); // nobody can take them any more
                            undelivered.clear();
                        }
                    }
                }
                if (drop != null) {
                    drop.forEach(EngineMessage::release);
                }
            });
            deliver(); // a closed connection completes the new subscriber at once
        }, FluxSink.OverflowStrategy.ERROR);
        // Messages an operator of ours drops (publishOn's queue on cancel) give their buffers back. Operators
        // after this one discard into the subscriber's own hooks: the docs ask users to release there too.
        return (callbacks == null ? flux : flux.publishOn(callbacks, recvDepth))
                .doOnDiscard(EngineMessage.class, EngineMessage::release);
    }

    private void completeReceiver(FluxSink<RdmaMessage> sink) {
        Throwable cause = closeCause;
        if (cause instanceof RdmaCompletionException) {
            sink.error(cause);
        } else {
            sink.complete();
        }
    }

    private void requestReceives(long n) {
        synchronized (lock) {
            if (receiver == null) {
                return;
            }
            flow.request(n);
            postReceivesLocked();
            maybeAdvertiseLocked();
        }
        deliver();
        flushDeferred();
    }

    /**
     * Hands received messages to the subscriber, in arrival order, as far as its demand goes; once the
     * connection is CLOSED and everything received was handed over, completes it. Any thread; one thread
     * at a time runs the loop ({@link #delivering}), so two threads (the poller with a new message, a
     * subscriber's request) never reorder messages; a message added or a request made while another
     * thread runs the loop is picked up by that thread, which re-checks under the lock before leaving.
     * Signals are emitted outside the lock; a subscriber that requests from onNext re-enters here and
     * returns at once.
     */
    private void deliver() {
        synchronized (lock) {
            if (delivering) {
                return;
            }
            delivering = true;
        }
        while (true) {
            FluxSink<RdmaMessage> sink;
            EngineMessage message = null;
            synchronized (lock) {
                sink = receiver;
                if (sink != null && flow.demand() > 0 && !undelivered.isEmpty()) {
                    message = undelivered.poll();
                    flow.delivered();
                } else if (sink != null && state == State.CLOSED && undelivered.isEmpty()) {
                    receiver = null;
                } else {
                    delivering = false;
                    return;
                }
            }
            try {
                if (message != null) {
                    sink.next(message);
                } else {
                    completeReceiver(sink);
                }
            } catch (Throwable t) {
                synchronized (lock) {
                    delivering = false; // let the next call deliver (and complete at the close)
                }
                throw t;
            }
        }
    }

    /** Posts receives for the demand not yet covered, while receive buffers are free. Under lock. */
    private void postReceivesLocked() {
        if (state == State.CLOSING || state == State.CLOSED || receiveFailed) {
            return;
        }
        int n = flow.receivesToPost(freeRecvCount, undelivered.size());
        if (n <= 0) {
            return;
        }
        recvWr.clear();
        long now = System.nanoTime();
        for (int k = 0; k < n; k++) {
            int index = freeRecv[--freeRecvCount];
            PendingOperation p = cqh.pending.acquire(this, OperationType.RECEIVE, null, index, now);
            recvBatch[k] = p;
            EngineBuffer b = recvBuffers[index];
            recvWr.add(p.wrId(), b.address(), recvBufferSize, b.lkey());
        }
        try {
            qp.postReceive(recvWr);
        } catch (RuntimeException e) {
            for (int k = 0; k < n; k++) {
                freeRecv[freeRecvCount++] = recvBatch[k].receiveIndex;
                cqh.pending.free(recvBatch[k]);
                recvBatch[k] = null;
            }
            receiveFailed = true;
            EngineLog.error(description + ": posting receives failed; closing the connection", e);
            // Without receives the connection cannot go on; close it (outside this lock) so receive() ends.
            cm.execute(() -> close(new io.reactiverdma.reactive.RdmaException(
                    description + ": ibv_post_recv failed: " + e.getMessage(), e)));
            return;
        }
        for (int k = 0; k < n; k++) {
            recvBatch[k] = null;
        }
        flow.receivesPosted(n);
        outstanding += n;
        metrics.outstanding(n);
    }

    /** A message was released: its buffer can take a new receive. Any thread. */
    void receiveBufferReleased(int index) {
        synchronized (lock) {
            if (state == State.CLOSED) {
                recvBuffers[index].release();
                return;
            }
            freeRecv[freeRecvCount++] = index;
            postReceivesLocked();
            maybeAdvertiseLocked();
        }
        flushDeferred();
    }

    /**
     * Writes the running total of posted receives to the peer when it is worth it: a quarter of the queue
     * unadvertised, or the peer possibly short of credits. One update in flight at a time, on its own slot.
     */
    private void maybeAdvertiseLocked() {
        if (state != State.ESTABLISHED || !flow.shouldAdvertise()) {
            return;
        }
        PendingOperation p = cqh.pending.acquire(this, OperationType.CREDIT_UPDATE, null, -1, System.nanoTime());
        sendWr.clear();
        int i = sendWr.add(p.wrId(), WrOpcode.RDMA_WRITE, SendFlags.SIGNALED | SendFlags.INLINE);
        sendWr.sge(i, creditWord.outgoing(flow.postedTotal()), 8, creditWord.lkey());
        sendWr.rdma(i, peerCreditAddress, peerCreditRkey);
        try {
            qp.postSend(sendWr);
        } catch (RuntimeException e) {
            cqh.pending.free(p);
            EngineLog.error(description + ": posting a credit update failed", e);
            return;
        }
        flow.advertising();
        outstanding++;
        metrics.outstanding(1);
    }

    // ------------------------------------------------------------------------------------ completions
    /** Poller thread: one completion of this connection's work. */
    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        OperationType type = p.type;
        Operation op = p.operation;
        int receiveIndex = p.receiveIndex;
        long latencyNs = System.nanoTime() - p.postedNs;
        cqh.pending.free(p);
        boolean success = status == WcStatus.SUCCESS.value();
        boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
        metrics.outstanding(-1);
        RdmaCompletionException failure = null;
        if (!success && !flushed) {
            failure = new RdmaCompletionException(type, status, WcStatus.of(status).name(), vendorErr, description);
            metrics.completionError(WcStatus.of(status).name());
        }
        if (type == OperationType.RECEIVE) {
            metrics.completed(type, success, flushed, latencyNs, success ? byteLen : 0);
            onReceiveCompletion(receiveIndex, success, failure, opcode, byteLen, imm, wcFlags);
        } else {
            metrics.completed(type, success, flushed, latencyNs, success && op != null ? op.length : 0);
            boolean finish;
            synchronized (lock) {
                outstanding--;
                if (type == OperationType.CREDIT_UPDATE) {
                    flow.advertisementCompleted();
                } else {
                    flow.sendCompleted();
                }
                if (failure != null && closeCause == null) {
                    closeCause = failure;
                }
                if (state == State.ESTABLISHED) {
                    drainLocked();
                    maybeAdvertiseLocked();
                }
                finish = state == State.CLOSING && outstanding == 0;
            }
            if (op != null) {
                if (success) {
                    op.succeed();
                } else if (flushed) {
                    op.fail(closedError(type + " was flushed"));
                } else {
                    op.fail(failure);
                }
            }
            flushDeferred();
            if (failure != null) {
                close(failure);
            }
            if (finish) {
                cm.execute(this::finishClose);
            }
        }
    }

    private void onReceiveCompletion(int index, boolean success, RdmaCompletionException failure, int opcode,
            int byteLen, int imm, int wcFlags) {
        boolean finish;
        synchronized (lock) {
            outstanding--;
            if (success) {
                flow.received();
                // A WRITE_WITH_IMM's data went to the WRITE's target; the receive buffer holds nothing.
                int length = opcode == WcOpcode.RECV_RDMA_WITH_IMM.value() ? 0 : byteLen;
                undelivered.add(messages[index].reuse(length, (wcFlags & WcFlags.WITH_IMM) != 0, imm));
                maybeAdvertiseLocked();
            } else {
                flow.receiveFlushed();
                freeRecv[freeRecvCount++] = index;
                if (failure != null && closeCause == null) {
                    closeCause = failure;
                }
            }
            finish = state == State.CLOSING && outstanding == 0;
        }
        if (success) {
            deliver();
        }
        flushDeferred();
        if (failure != null) {
            close(failure);
        }
        if (finish) {
            cm.execute(this::finishClose);
        }
    }

    // ------------------------------------------------------------------------------------------ close
    @Override
    public void dispose() {
        close(null);
    }

    @Override
    public boolean isDisposed() {
        synchronized (lock) {
            return state == State.CLOSING || state == State.CLOSED;
        }
    }

    /** Starts closing (any thread, idempotent): see the class comment. */
    void close(Throwable cause) {
        synchronized (lock) {
            if (closeCause == null) {
                closeCause = cause;
            }
            if (state == State.CLOSING || state == State.CLOSED) {
                return;
            }
            state = State.CLOSING;
            Operation op;
            while ((op = waiting.poll()) != null) {
                deferred.add(op);
                deferredErrors.add(closedError("not posted"));
            }
            // A registered credit wait needs nothing here: the poller drops it at its next check
            // (recheckCredits answers DONE once the state is no longer ESTABLISHED).
        }
        flushDeferred();
        if (closeStarted.compareAndSet(false, true)) {
            cm.execute(this::disconnect);
        }
    }

    /** rdma_cm thread: move the QP to ERR so everything posted flushes; then wait for the flushes. */
    private void disconnect() {
        try {
            id.disconnect();
        } catch (RuntimeException notConnected) {
            // Never connected (or the peer is gone): flush the QP ourselves.
            try {
                qp.toError();
            } catch (RuntimeException e) {
                EngineLog.debug(description + ": moving the QP to ERR failed: " + e);
            }
        }
        boolean finish;
        synchronized (lock) {
            finish = outstanding == 0;
        }
        if (finish) {
            finishClose();
        } else {
            cm.schedule(this::drainTimedOut, DRAIN_TIMEOUT);
        }
    }

    private void drainTimedOut() {
        synchronized (lock) {
            if (state == State.CLOSED) {
                return;
            }
            EngineLog.warn(description + ": " + outstanding + " work requests not flushed within " + DRAIN_TIMEOUT
                    + "; destroying the QP and failing them");
        }
        // The QP goes first: once it is destroyed the device no longer touches the buffers its work requests
        // name, so failing those operations (which drops their holds) cannot recycle memory in use.
        destroyQueuePair();
        // Fail what is left on the poller thread (which owns completions), then finish on this thread.
        cqh.poller.execute(() -> {
            for (PendingOperation p : cqh.pending.snapshotInUse()) {
                if (p.connection == this) {
                    onCompletion(p, WcStatus.WR_FLUSH_ERR.value(), 0, 0, 0, 0, 0);
                }
            }
            cm.execute(this::finishClose);
        });
    }

    /** rdma_cm thread. Idempotent. */
    private void destroyQueuePair() {
        if (qpDestroyed) {
            return;
        }
        qpDestroyed = true;
        try {
            id.destroyQueuePair();
        } catch (RuntimeException e) {
            EngineLog.error(description + ": rdma_destroy_qp failed", e);
        }
    }

    /**
     * rdma_cm thread, once nothing is outstanding: signal the end and release everything in order:
     * receive() completes (after the messages that arrived before the close), the QP is destroyed, then the
     * receive buffers go back to the pool (those of unreleased messages when the messages are released),
     * then the id, the credit word and the CQ reservation; last the CLOSED event and onDispose().
     */
    private void finishClose() {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        InetSocketAddress peer = remoteAddressOrNull();
        synchronized (lock) {
            state = State.CLOSED;
        }
        deliver();
        cm.unregister(id);
        destroyQueuePair();
        List<EngineMessage> drop = null;
        synchronized (lock) {
            // Buffers with an unreleased message are released when the message is.
            for (int k = 0; k < freeRecvCount; k++) {
                recvBuffers[freeRecv[k]].release();
            }
            freeRecvCount = 0;
            // Messages that arrived before the close still go to the subscriber; with none, nobody can take them.
            if (receiver == null && !undelivered.isEmpty()) {
                drop = new ArrayList<>(undelivered);
                undelivered.clear();
            }
        }
        if (drop != null) {
            drop.forEach(EngineMessage::release); // state CLOSED: releases their buffers
        }
        try {
            id.close();
        } catch (RuntimeException e) {
            EngineLog.error(description + ": rdma_destroy_id failed", e);
        }
        device.controlWords.free(creditWord);
        device.releaseCq(cqh, cqEntries);
        metrics.connections(-1);
        emit(new ConnectionEvent(ConnectionEvent.Type.CLOSED, 0, null, peer));
        events.tryEmitComplete();
        disposed.tryEmitEmpty();
    }

    // ------------------------------------------------------------------------------------------ views
    @Override
    public Flux<ConnectionEvent> events() {
        return events.asFlux();
    }

    @Override
    public RdmaMemory memory() {
        return device.pool;
    }

    @Override
    public int maxMessageSize() {
        int peer = peerReceiveBufferSize();
        return peer > 0 ? peer : recvBufferSize;
    }

    private int peerReceiveBufferSize() {
        synchronized (lock) {
            return peerReceiveBufferSize;
        }
    }

    @Override
    public boolean creditFlowControl() {
        synchronized (lock) {
            return flow.credits();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        InetSocketAddress a = localAddress;
        return a != null || id.isClosed() ? a : id.localAddress();
    }

    @Override
    public InetSocketAddress remoteAddress() {
        InetSocketAddress a = remoteAddress;
        return a != null ? a : remoteAddressOrNull();
    }

    private InetSocketAddress remoteAddressOrNull() {
        try {
            return id.isClosed() ? null : id.peerAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    @Override
    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    /** For tests and metrics: operations waiting for a slot or a credit. */
    int waitingCount() {
        synchronized (lock) {
            return waiting.size();
        }
    }

    State state() {
        synchronized (lock) {
            return state;
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
