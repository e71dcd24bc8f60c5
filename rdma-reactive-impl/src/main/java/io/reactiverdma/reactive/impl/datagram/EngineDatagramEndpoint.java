package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.cm.EngineContext;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.connection.OwnerThread;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.device.QueuePairOwner;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.verbs.AsyncEventType;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A datagram endpoint: one UD queue pair on rdma_cm's UDP port space, and the API's facade over its parts:
 * the {@link DatagramReceiver receive side} and the {@link DatagramSender send side} (poller thread), the
 * {@link PeerDirectory destinations} and the {@link MulticastMembership groups} (rdma_cm thread). It checks
 * every request before anything is resolved or posted, routes completions and runs the close sequence.
 *
 * <p>Two rdma_cm ids: the data id, bound to the local address with an ephemeral port, holds the QP and joins
 * multicast groups (rdma_cm refuses joins on a listening id); the listening id, bound to the configured port,
 * answers peers' SIDR requests with the data QP's number, so {@code udaddy} and other endpoints can resolve
 * this one.
 *
 * <p>Closing: on the rdma_cm thread the listening id goes and every group is left; on the poller waiting sends
 * fail as closed ({@link ConnectionClosedException}, as for connections), streams complete and the QP moves to
 * ERR, so everything posted flushes; the last completion (or none posted) lets the rdma_cm thread destroy the
 * QP, the ids, the handles and the memory.
 */
public final class EngineDatagramEndpoint implements RdmaDatagramEndpoint, CompletionTarget, PollerClient, QueuePairOwner {
    private static final int LISTEN_BACKLOG = 64;

    private final CmEventLoop cm;
    private final CmId dataId;
    private final CmId listenId;
    private final DeviceResources device;
    private final InetSocketAddress localAddress;
    private final EngineMetrics metrics;
    private final int maxMessageSize;
    private final int queueEntries;
    private final CompletionQueueHandle cqh;
    private final QueuePair qp;
    private final CompletionPoller poller;
    final DatagramReceiver receiver;
    final DatagramSender sender;
    private final PeerDirectory peers;
    private final MulticastMembership groups;
    private final DatagramRequests requests;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    /**
     * Completes once the poller's first flush posted the receives (or fails if the endpoint closed first):
     * {@code bind} emits the endpoint only then, so a datagram sent to it right after finds a receive posted
     * instead of being dropped by the device.
     */
    private final Sinks.Empty<Void> receivesPosted = Sinks.empty();
    // Poller thread.
    private boolean flushRequested;
    private boolean closed;
    private boolean finished;

    /**
     * Opens an endpoint at {@code local} (the configured host, resolved before: not on this thread) as
     * {@link io.reactiverdma.reactive.RdmaDatagram#bind()} documents. rdma_cm thread; throws after releasing
     * what it made.
     */
    public static EngineDatagramEndpoint open(EngineContext engine, CmEventLoop cm, RdmaTransportConfig config,
            InetSocketAddress local) {
        CmId data = null;
        CmId listen = null;
        CompletionQueueHandle cqh = null;
        DeviceResources device = null;
        int entries = config.option(RdmaOption.SEND_QUEUE_DEPTH) + config.option(RdmaOption.RECEIVE_QUEUE_DEPTH);
        try {
            data = cm.channel().createId(PortSpace.UDP);
            data.bind(new InetSocketAddress(local.getAddress(), 0));
            listen = cm.channel().createId(PortSpace.UDP);
            listen.bind(local);
            device = engine.device(data);
            EngineMetrics metrics = EngineMetrics.of(config, device.context().name(), null);
            cqh = device.acquireCq(config, entries, metrics);
            return new EngineDatagramEndpoint(cm, config, data, listen, device, cqh, metrics);
        } catch (RuntimeException e) {
            if (data != null) {
                try {
                    data.destroyQueuePair();
                } catch (RuntimeException ignored) {
                    // none was made
                }
            }
            if (cqh != null) {
                device.releaseCq(cqh, entries);
            }
            if (listen != null) {
                listen.close();
            }
            if (data != null) {
                data.close();
            }
            throw e instanceof RdmaException ? e : new RdmaException("cannot bind a datagram endpoint to " + local
                    + ": " + e.getMessage(), e);
        }
    }

    private EngineDatagramEndpoint(CmEventLoop cm, RdmaTransportConfig config, CmId dataId, CmId listenId,
            DeviceResources device, CompletionQueueHandle cqh, EngineMetrics metrics) {
        this.cm = cm;
        this.dataId = dataId;
        this.listenId = listenId;
        this.device = device;
        this.cqh = cqh;
        this.metrics = metrics;
        this.localAddress = listenId.localAddress();
        int mtu = dataId.activeMtu();
        this.maxMessageSize = mtu - Grh.SIZE;
        int sendDepth = config.option(RdmaOption.SEND_QUEUE_DEPTH);
        int receiveDepth = config.option(RdmaOption.RECEIVE_QUEUE_DEPTH);
        this.queueEntries = sendDepth + receiveDepth;
        this.poller = cqh.poller;
        this.qp = dataId.createDatagramQueuePair(device.pd, cqh.cq, new QpSpec(sendDepth, receiveDepth, 0));
        DatagramReceiver r = null;
        try {
            // A peer may send a whole MTU: each receive holds it and the GRH.
            r = new DatagramReceiver(toString(), device.pool, receiveDepth, mtu + Grh.SIZE, qp, cqh.pending, this,
                    poller, metrics, this::requestFlush, this::postRefused, config.callbackScheduler());
            this.sender = new DatagramSender(toString(), device.pool, sendDepth, maxMessageSize,
                    config.option(RdmaOption.SIGNAL_INTERVAL), qp, poller, cqh.pending, this, metrics, this::requestFlush,
                    this::postRefused, EngineDatagramEndpoint::closedError);
            listenId.listen(LISTEN_BACKLOG);
        } catch (RuntimeException e) {
            if (r != null) {
                r.releaseMemory();
            }
            throw e; // open(..) destroys the QP
        }
        this.receiver = r;
        this.peers = new PeerDirectory(cm, dataId, device.pd, config, metrics, localAddress, closing::get);
        this.groups = new MulticastMembership(toString(), cm, dataId, peers, receiver, metrics);
        this.requests = new DatagramRequests(toString(), maxMessageSize, device.pool, receiver, sender, peers, groups,
                closing::get);
        device.register(qp.qpNum(), this);
        cm.register(listenId, new SidrResponder(toString(), qp.qpNum(), closing::get));
        cm.register(dataId, this::onDataEvent);
        poller.attach(this);
        poller.execute(this::requestFlush); // the first receives
    }

    @Override
    public InetSocketAddress localAddress() {
        return localAddress;
    }

    @Override
    public int qpNumber() {
        return qp.qpNum();
    }

    @Override
    public int maxMessageSize() {
        return maxMessageSize;
    }

    @Override
    public RdmaMemory memory() {
        return device.pool;
    }

    @Override
    public long droppedCount() {
        return receiver.dropped();
    }

    @Override
    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    @Override
    public boolean isDisposed() {
        return closing.get();
    }

    /** The device resources this endpoint uses (the engine closes it when the device goes). */
    public DeviceResources device() {
        return device;
    }

    // ---------------------------------------------------------------- receiving

    @Override
    public Flux<RdmaDatagramMessage> receive() {
        return receiver.receive();
    }

    @Override
    public Flux<RdmaDatagramMessage> join(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        return groups.join(group, closing::get);
    }

    @Override
    public Mono<InetSocketAddress> joined(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        MulticastGroup g = group.getAddress() == null ? null : groups.get(group.getAddress());
        if (g == null) {
            return Mono.error(new InvalidRequestException(Reason.NOT_JOINED, "group " + group + " is not being joined"));
        }
        return g.joined.asMono();
    }

    // ---------------------------------------------------------------- sending

    @Override
    public Mono<Void> send(ByteBuffer data, InetSocketAddress peer) {
        return requests.send(data, peer, false, 0);
    }

    @Override
    public Mono<Void> send(ByteBuffer data, InetSocketAddress peer, int immediate) {
        return requests.send(data, peer, true, immediate);
    }

    @Override
    public Mono<Void> send(RegisteredBuffer buffer, InetSocketAddress peer) {
        return requests.send(buffer, peer, false, 0);
    }

    @Override
    public Mono<Void> send(RegisteredBuffer buffer, InetSocketAddress peer, int immediate) {
        return requests.send(buffer, peer, true, immediate);
    }

    @Override
    public Mono<Void> reply(RdmaDatagramMessage received, ByteBuffer data, int immediate) {
        return requests.reply(received, data, immediate);
    }

    // ---------------------------------------------------------------- poller: flush and completions

    private void requestFlush() {
        if (!flushRequested) {
            flushRequested = true;
            poller.requestFlush(this);
        }
    }

    /** End of a poller cycle: returned receive buffers and waiting sends, each as one chained post. */
    @Override
    public int flush() {
        assert OwnerThread.check(poller);
        flushRequested = false;
        int posted = receiver.post() + sender.flush();
        receivesPosted.tryEmitEmpty(); // the first flush posted them; later ones find it done
        return posted;
    }

    /**
     * Completes when the first receives are posted (the poller's first flush), errors if the endpoint closed
     * before. Any thread.
     */
    public Mono<Void> receivesPosted() {
        return receivesPosted.asMono();
    }

    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        if (p.type == OperationType.RECEIVE) {
            int index = p.receiveIndex;
            int sourceQpn = cqh.cq.sourceQpn(); // valid only now, inside the poll
            cqh.pending.free(p);
            receiver.completed(index, status, byteLen, imm, wcFlags, sourceQpn);
        } else {
            sender.completed(p, status, vendorErr);
        }
        if (closed && receiver.outstanding() == 0 && sender.outstanding() == 0) {
            finish();
        }
    }

    @Override
    public void pollerFailed(Throwable cause) {
        EngineLog.error(this + ": its completion poller failed; closing", cause);
        receiver.abandonPosted(); // nothing will complete any more
        sender.abandonPosted();
        dispose();
    }

    /** The device broke the QP (an asynchronous QP error): nothing more can be sent or received on it. */
    @Override
    public void queuePairFailed(AsyncEventType type) {
        EngineLog.warn(this + ": the device reported " + type + " for its QP; closing");
        dispose();
    }

    /** A post refused for a reason other than a full queue: the endpoint cannot be trusted with more. */
    private void postRefused(Throwable refusal) {
        EngineLog.error(this + ": a post was refused; closing", refusal);
        dispose();
    }

    @Override
    public int recheckCredits() {
        return CompletionPoller.DONE;
    }

    // ---------------------------------------------------------------- rdma_cm thread

    private void onDataEvent(CmEventInfo e) {
        switch (e.type()) {
            case MULTICAST_JOIN, MULTICAST_ERROR -> groups.onJoinEvent(e);
            case DEVICE_REMOVAL -> dispose();
            default -> EngineLog.debug(this + ": rdma_cm event " + e);
        }
    }

    // ---------------------------------------------------------------- closing

    @Override
    public void dispose() {
        if (closing.compareAndSet(false, true)) {
            cm.execute(this::closeOnCm);
        }
    }

    private void closeOnCm() {
        cm.unregister(listenId);
        listenId.close();
        groups.leaveAll();
        poller.execute(this::closeOnPoller);
    }

    private void closeOnPoller() {
        closed = true;
        receivesPosted.tryEmitError(closedError()); // closed before its first receives were posted
        sender.close();
        receiver.close();
        if (receiver.outstanding() == 0 && sender.outstanding() == 0) {
            finish();
            return;
        }
        try {
            qp.toError(); // everything posted flushes; the last flush finishes the close
        } catch (RuntimeException e) {
            EngineLog.error(this + ": moving the QP to ERR failed", e);
            finish();
        }
    }

    /** Poller thread, once nothing posted is left: the QP, the ids, the handles and the memory go. */
    private void finish() {
        if (finished) {
            return;
        }
        finished = true;
        poller.detach(this);
        cm.execute(() -> {
            cm.unregister(dataId);
            releaseNative();
            disposed.tryEmitEmpty();
        });
    }

    /** rdma_cm thread: releases in reverse order of creation. */
    private void releaseNative() {
        device.unregister(qp.qpNum(), this);
        try {
            dataId.destroyQueuePair();
        } catch (RuntimeException e) {
            EngineLog.error(this + ": rdma_destroy_qp failed", e);
        }
        peers.close();
        sender.releaseMemory();
        receiver.releaseMemory();
        device.releaseCq(cqh, queueEntries);
        dataId.close();
        if (!listenId.isClosed()) {
            listenId.close();
        }
    }

    /** What connections fail with once closed, so a caller handles both alike. */
    static ConnectionClosedException closedError() {
        return new ConnectionClosedException("the datagram endpoint is closed");
    }

    @Override
    public String toString() {
        return "datagram endpoint " + localAddress + " (qpn " + (qp == null ? "-" : qp.qpNum()) + ")";
    }
}
