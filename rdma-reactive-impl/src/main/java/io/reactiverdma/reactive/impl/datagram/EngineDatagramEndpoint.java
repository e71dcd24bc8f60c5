package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaDatagramEndpoint;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMetricsRecorder.DatagramOutcome;
import io.reactiverdma.reactive.RdmaMulticastException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.cm.EngineContext;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.completion.CompletionQueueHandle;
import io.reactiverdma.reactive.impl.completion.CompletionTarget;
import io.reactiverdma.reactive.impl.completion.PendingOperation;
import io.reactiverdma.reactive.impl.completion.PendingOperations;
import io.reactiverdma.reactive.impl.completion.PollerClient;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import io.reactiverdma.reactive.impl.verbs.QpSpec;
import io.reactiverdma.reactive.impl.verbs.QueuePair;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.ReceiveWorkRequests;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A datagram endpoint: one UD queue pair on rdma_cm's UDP port space. Two rdma_cm ids: the data id, bound to
 * the local address with an ephemeral port, holds the QP and joins multicast groups (rdma_cm refuses joins on
 * a listening id); the listening id, bound to the configured port, answers peers' SIDR requests with the data
 * QP's number, so {@code udaddy} and other endpoints can resolve this one.
 *
 * <p>Threads, as for connections: rdma_cm calls (open, resolution, joins, close) on the rdma_cm thread; posts,
 * completions, receive buffers, streams and send slots on the CQ's poller thread. Receive buffer {@code i}
 * is bytes {@code [i * bufferSize, (i + 1) * bufferSize)} of one registered slab: 40 bytes of GRH, then up
 * to the MTU of payload. Sends are copied into one of {@code SEND_QUEUE_DEPTH} registered slots; sends
 * beyond that wait in order.
 */
public final class EngineDatagramEndpoint implements RdmaDatagramEndpoint, CompletionTarget, PollerClient,
        io.reactiverdma.reactive.impl.device.QueuePairOwner {
    /** The Q_Key rdma_cm gives UD QPs of the UDP port space ({@code RDMA_UDP_QKEY}), used for replies. */
    static final int UDP_QKEY = 0x01234567;
    private static final int LISTEN_BACKLOG = 64;

    private final CmEventLoop cm;
    private final RdmaTransportConfig config;
    private final CmId dataId;
    private final CmId listenId;
    private final DeviceResources device;
    private final InetSocketAddress localAddress;
    private final EngineMetrics metrics;
    private final int maxMessageSize;
    private final int bufferSize;
    private final int sendDepth;
    private final int receiveDepth;
    private CompletionQueueHandle cqh;
    private QueuePair qp;
    private ByteBuffer receiveSlab;
    private Registration receiveRegistration;
    private ByteBuffer sendSlab;
    private Registration sendRegistration;

    // Poller thread.
    private CompletionPoller poller;
    private PendingOperations pending;
    private final ArrayDeque<SendOperation> waitingSends = new ArrayDeque<>();
    private int[] freeSendSlots;
    private int freeSendCount;
    private SendWorkRequests sendChain;
    private ReceiveWorkRequests receiveChain;
    /** Work requests posted and not completed (flushes included): close finishes when it is 0. */
    private int posted;
    private boolean closed;
    private boolean finished;
    private DatagramStream unicast;
    private final Map<InetAddress, DatagramStream> groupStreams = new HashMap<>();

    // rdma_cm thread.
    private final ArrayDeque<MulticastGroup> joinQueue = new ArrayDeque<>();
    private MulticastGroup joinInFlight;

    // Any thread.
    private final AtomicBoolean closing = new AtomicBoolean();
    private final Map<InetAddress, MulticastGroup> groups = new ConcurrentHashMap<>();
    /** Resolutions of peers under way (rdma_cm thread), shared by the sends that wait for them. */
    private final Map<InetSocketAddress, Mono<Destination>> resolving = new ConcurrentHashMap<>();
    /** Peers sent to (by address) and senders replied to (by {@link ReplyKey}), bounded. */
    private final AddressHandleCache unicastHandles;
    private final long peerRefreshNanos;
    /** The groups' address handles: retired (destroyed) when it closes. */
    private final Queue<Destination> destinations = new ConcurrentLinkedQueue<>();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private volatile long dropped;

    private record ReplyKey(InetAddress address, int qpn) {
    }

    /** A send waiting for or holding a send slot. */
    private static final class SendOperation {
        final byte[] data;
        final Destination destination;
        final boolean hasImmediate;
        final int immediate;
        final MonoSink<Void> sink;
        int slot = -1;

        SendOperation(byte[] data, Destination destination, boolean hasImmediate, int immediate, MonoSink<Void> sink) {
            this.data = data;
            this.destination = destination;
            this.hasImmediate = hasImmediate;
            this.immediate = immediate;
            this.sink = sink;
        }
    }

    /**
     * Opens an endpoint as {@link io.reactiverdma.reactive.RdmaDatagram#bind()} documents. rdma_cm thread;
     * throws after releasing what it made.
     */
    public static EngineDatagramEndpoint open(EngineContext engine, CmEventLoop cm, RdmaTransportConfig config) {
        InetSocketAddress local = new InetSocketAddress(config.host(), config.port());
        if (local.isUnresolved()) {
            throw new RdmaException("cannot bind a datagram endpoint: host " + config.host() + " does not resolve");
        }
        CmId data = null;
        CmId listen = null;
        try {
            data = cm.channel().createId(PortSpace.UDP);
            data.bind(new InetSocketAddress(local.getAddress(), 0));
            listen = cm.channel().createId(PortSpace.UDP);
            listen.bind(local);
            DeviceResources device = engine.device(data.device());
            return new EngineDatagramEndpoint(cm, config, data, listen, device);
        } catch (RuntimeException e) {
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
            DeviceResources device) {
        this.cm = cm;
        this.config = config;
        this.dataId = dataId;
        this.listenId = listenId;
        this.device = device;
        this.localAddress = listenId.localAddress();
        this.metrics = EngineMetrics.of(config, device.context().name(), null);
        int mtu = dataId.activeMtu();
        this.maxMessageSize = mtu - Grh.SIZE;
        this.bufferSize = mtu + Grh.SIZE; // a peer may send a whole MTU: the receive holds it and the GRH
        this.sendDepth = config.option(RdmaOption.SEND_QUEUE_DEPTH);
        this.receiveDepth = config.option(RdmaOption.RECEIVE_QUEUE_DEPTH);
        this.unicastHandles = new AddressHandleCache(config.option(RdmaOption.DATAGRAM_ADDRESS_HANDLES), metrics);
        this.peerRefreshNanos = config.option(RdmaOption.DATAGRAM_PEER_REFRESH).toNanos();
        try {
            cqh = device.acquireCq(config, sendDepth + receiveDepth, metrics);
            qp = dataId.createDatagramQueuePair(device.pd, cqh.cq, new QpSpec(sendDepth, receiveDepth, 0));
            receiveSlab = ByteBuffer.allocateDirect(receiveDepth * bufferSize);
            receiveRegistration = device.pd.register(receiveSlab, AccessFlags.LOCAL_WRITE);
            sendSlab = ByteBuffer.allocateDirect(sendDepth * maxMessageSize);
            sendRegistration = device.pd.register(sendSlab, AccessFlags.LOCAL_WRITE);
            listenId.listen(LISTEN_BACKLOG);
        } catch (RuntimeException e) {
            releaseNative();
            throw e;
        }
        poller = cqh.poller;
        pending = cqh.pending;
        freeSendSlots = new int[sendDepth];
        for (int i = 0; i < sendDepth; i++) {
            freeSendSlots[freeSendCount++] = sendDepth - 1 - i;
        }
        sendChain = new SendWorkRequests(1, 1);
        receiveChain = new ReceiveWorkRequests(1, 1);
        device.register(qp.qpNum(), this);
        cm.register(listenId, this::onListenEvent);
        cm.register(dataId, this::onDataEvent);
        poller.attach(this);
        poller.execute(() -> {
            for (int i = 0; i < receiveDepth; i++) {
                postReceive(i);
            }
        });
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
    public long droppedCount() {
        return dropped;
    }

    @Override
    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    @Override
    public boolean isDisposed() {
        return closing.get();
    }

    // ---------------------------------------------------------------- receiving

    @Override
    public Flux<RdmaDatagramMessage> receive() {
        return Flux.<RdmaDatagramMessage>create(sink -> {
            DatagramStream s = new DatagramStream(sink);
            poller.execute(() -> {
                if (closed) {
                    s.complete();
                } else if (unicast != null && !unicast.isCancelled()) {
                    sink.error(new IllegalStateException("receive() of " + this + " already has a subscriber"));
                } else {
                    // A subscriber that cancelled on the poller (from its onNext) is gone even if its own
                    // clean-up task is still queued behind this one: a next subscriber that saw it disposed
                    // must not be refused (seen on rxe: the refused one waited for datagrams for ever).
                    if (unicast != null) {
                        unicast.cancelled();
                    }
                    unicast = s;
                    s.drain();
                }
            });
            sink.onRequest(n -> poller.execute(s::drain));
            sink.onDispose(() -> {
                s.cancel(); // seen by an emission under way on the poller, which then releases instead
                poller.execute(() -> {
                    if (unicast == s) {
                        unicast = null;
                    }
                    s.cancelled();
                });
            });
        }, FluxSink.OverflowStrategy.BUFFER).doOnDiscard(RdmaDatagramMessage.class, RdmaDatagramMessage::release);
    }

    /** A released datagram's buffer is posted again (unless the endpoint closed). Any thread. */
    void returnReceiveBuffer(int slot) {
        poller.run(() -> {
            if (!closed) {
                postReceive(slot);
            }
        });
    }

    private void postReceive(int slot) {
        PendingOperation p = pending.acquire(this, OperationType.RECEIVE, null, slot, 0);
        receiveChain.clear();
        receiveChain.add(p.wrId(), receiveRegistration.address() + (long) slot * bufferSize, bufferSize,
                receiveRegistration.lkey());
        try {
            qp.postReceive(receiveChain);
            posted++;
        } catch (RuntimeException e) {
            pending.free(p);
            EngineLog.error(this + ": posting receive buffer " + slot + " failed; it stays unused", e);
        }
    }

    private void onReceive(int slot, int status, int byteLen, int imm, int wcFlags, int sourceQpn) {
        if (status != 0) {
            if (!closed) {
                drop(0);
                postReceive(slot);
            }
            return;
        }
        int base = slot * bufferSize;
        int length = byteLen - Grh.SIZE;
        InetAddress to = Grh.destination(receiveSlab, base);
        DatagramStream target = to.isMulticastAddress() ? groupStreams.get(to) : unicast;
        if (closed || target == null || length < 0) {
            drop(Math.max(0, length));
            if (!closed) {
                postReceive(slot);
            }
            return;
        }
        ByteBuffer view = receiveSlab.duplicate().position(base + Grh.SIZE).limit(base + Grh.SIZE + length).slice()
                .asReadOnlyBuffer();
        metrics.datagram(DatagramOutcome.RECEIVED, length);
        target.offer(new EngineDatagram(this, slot, view, new InetSocketAddress(Grh.source(receiveSlab, base), 0),
                sourceQpn, to.isMulticastAddress() ? new InetSocketAddress(to, 0) : null,
                (wcFlags & WcFlags.WITH_IMM) != 0, imm));
    }

    private void drop(int bytes) {
        dropped++;
        metrics.datagram(DatagramOutcome.DROPPED, bytes);
    }

    // ---------------------------------------------------------------- sending

    @Override
    public Mono<Void> send(ByteBuffer data, InetSocketAddress peer) {
        return send(data, peer, false, 0);
    }

    @Override
    public Mono<Void> send(ByteBuffer data, InetSocketAddress peer, int immediate) {
        return send(data, peer, true, immediate);
    }

    private Mono<Void> send(ByteBuffer data, InetSocketAddress peer, boolean hasImmediate, int immediate) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(peer, "peer");
        byte[] copy;
        try {
            copy = checkedCopy(data);
            if (peer.isUnresolved()) {
                throw new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, "peer " + peer + " does not resolve");
            }
        } catch (RdmaException e) { // too large, or closed: refused before anything is resolved or posted
            return Mono.error(e);
        }
        InetAddress address = peer.getAddress();
        if (address.isMulticastAddress()) {
            MulticastGroup g = groups.get(address);
            if (g == null || g.destination == null) {
                return Mono.error(notJoined(address));
            }
            return Mono.defer(() -> {
                Destination d = g.destination;
                return d.hold() ? post(copy, d, hasImmediate, immediate) : Mono.error(notJoined(address));
            });
        }
        return Mono.defer(() -> sendToPeer(peer, copy, hasImmediate, immediate));
    }

    private static InvalidRequestException notJoined(InetAddress group) {
        return new InvalidRequestException(Reason.NOT_JOINED, "cannot send to multicast group " + group.getHostAddress()
                + ": this endpoint has not joined it (join(group) and wait for joined(group))");
    }

    /**
     * At subscription: the cached destination of {@code peer}, held for this send (and, when its answer is
     * older than DATAGRAM_PEER_REFRESH, resolved again in the background: a peer that restarted has a new QP
     * number), or the shared resolution of it. A destination evicted between its resolution and this send's
     * hold is resolved again.
     */
    private Mono<Void> sendToPeer(InetSocketAddress peer, byte[] copy, boolean hasImmediate, int immediate) {
        Destination d = unicastHandles.hold(peer);
        if (d != null) {
            if (System.nanoTime() - d.createdNanos > peerRefreshNanos && d.claimRefresh()) {
                resolving.computeIfAbsent(peer, this::resolve).subscribe(null, e -> unicastHandles.remove(peer, d));
            }
            return post(copy, d, hasImmediate, immediate);
        }
        return resolving.computeIfAbsent(peer, this::resolve).flatMap(r -> r.hold() ? post(copy, r, hasImmediate, immediate)
                : Mono.defer(() -> sendToPeer(peer, copy, hasImmediate, immediate)));
    }

    @Override
    public Mono<Void> reply(RdmaDatagramMessage received, ByteBuffer data, int immediate) {
        Objects.requireNonNull(received, "received");
        Objects.requireNonNull(data, "data");
        byte[] copy;
        try {
            copy = checkedCopy(data);
        } catch (RdmaException e) { // too large, or closed: refused before anything is resolved or posted
            return Mono.error(e);
        }
        if (!(received instanceof EngineDatagram d) || d.endpoint() != this) {
            return Mono.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, received + " was not received by " + this));
        }
        if (d.isReleased()) {
            return Mono.error(released());
        }
        ReplyKey key = new ReplyKey(d.sender().getAddress(), d.senderQpNumber());
        // The GRH is copied now: the datagram may be released (and its buffer reused) before the handle is made.
        byte[] grh = new byte[Grh.SIZE];
        receiveSlab.get(d.slot * bufferSize, grh);
        if (d.isReleased()) {
            return Mono.error(released());
        }
        return Mono.defer(() -> replyTo(key, grh, d.sender(), copy, immediate));
    }

    /** At subscription: the cached handle for the sender, held for this reply, or a new one made from its GRH. */
    private Mono<Void> replyTo(ReplyKey key, byte[] grh, InetSocketAddress sender, byte[] copy, int immediate) {
        Destination known = unicastHandles.hold(key);
        if (known != null) {
            return post(copy, known, true, immediate);
        }
        return Mono.<Destination>create(sink -> cm.execute(() -> {
            if (closing.get()) {
                sink.error(closedError());
                return;
            }
            try {
                ByteBuffer header = ByteBuffer.allocateDirect(Grh.SIZE).put(grh).flip();
                Destination made = new Destination(dataId.createReplyAddressHandle(device.pd, header, key.qpn()),
                        key.qpn(), UDP_QKEY, metrics);
                unicastHandles.put(key, made);
                sink.success(made);
            } catch (RuntimeException e) {
                sink.error(new RdmaException("cannot answer " + sender + ": " + e.getMessage(), e));
            }
        })).flatMap(made -> made.hold() ? post(copy, made, true, immediate)
                : Mono.defer(() -> replyTo(key, grh, sender, copy, immediate))); // evicted at once: made again
    }

    private byte[] checkedCopy(ByteBuffer data) {
        int n = data.remaining();
        if (n > maxMessageSize) {
            throw new InvalidRequestException(Reason.MESSAGE_TOO_LARGE, "a datagram of " + n + " bytes exceeds "
                    + maxMessageSize + " (the path MTU " + (maxMessageSize + Grh.SIZE) + " minus the 40-byte GRH)");
        }
        if (closing.get()) {
            throw closedError();
        }
        byte[] copy = new byte[n];
        data.duplicate().get(copy);
        return copy;
    }

    /**
     * One resolution of {@code peer}, shared by the sends that miss the cache meanwhile; once it is over
     * (its answer is in the cache, or it failed) the next miss resolves again.
     */
    private Mono<Destination> resolve(InetSocketAddress peer) {
        int timeoutMs = (int) Math.min(Integer.MAX_VALUE, config.option(RdmaOption.CONNECT_TIMEOUT).toMillis());
        return Mono.<Destination>create(sink -> cm.execute(() -> new PeerResolver(this, cm, peer, timeoutMs, sink).start()))
                .doFinally(s -> resolving.remove(peer))
                .cache();
    }

    /**
     * rdma_cm thread: the address handle for {@code peer}'s resolved route, cached (replacing an older answer),
     * or null once the endpoint closes.
     */
    Destination destinationFor(InetSocketAddress peer, CmId id, DatagramRoute route) {
        if (closing.get()) {
            return null;
        }
        Destination d = new Destination(id.createAddressHandle(device.pd, route), route.remoteQpn(), route.qkey(), metrics);
        return unicastHandles.put(peer, d) ? d : null;
    }

    private Destination track(Destination d) {
        destinations.add(d);
        return d;
    }

    private Mono<Void> post(byte[] data, Destination destination, boolean hasImmediate, int immediate) {
        return Mono.create(sink -> poller.execute(() -> post(new SendOperation(data, destination, hasImmediate, immediate, sink))));
    }

    /** Poller thread: {@code op} holds its destination until it completes or fails. */
    private void post(SendOperation op) {
        if (closed) {
            failed(op, closedError());
            return;
        }
        if (op.destination.isGroup() && op.destination.isRetired()) {
            failed(op, new InvalidRequestException(Reason.NOT_JOINED, "the group this datagram was addressed to was left"));
            return;
        }
        if (freeSendCount == 0) {
            waitingSends.add(op);
            return;
        }
        int slot = freeSendSlots[--freeSendCount];
        op.slot = slot;
        sendSlab.put(slot * maxMessageSize, op.data);
        OperationType type = op.hasImmediate ? OperationType.SEND_WITH_IMMEDIATE : OperationType.SEND;
        PendingOperation p = pending.acquire(this, type, op, -1, System.nanoTime());
        sendChain.clear();
        int i = sendChain.add(p.wrId(), op.hasImmediate ? WrOpcode.SEND_WITH_IMM : WrOpcode.SEND, SendFlags.SIGNALED);
        sendChain.sge(i, sendRegistration.address() + (long) slot * maxMessageSize, op.data.length, sendRegistration.lkey());
        if (op.hasImmediate) {
            sendChain.immData(i, op.immediate);
        }
        op.destination.target(sendChain, i);
        try {
            qp.postSend(sendChain);
        } catch (RuntimeException e) {
            pending.free(p);
            freeSendSlots[freeSendCount++] = slot;
            failed(op, new RdmaException("ibv_post_send refused a datagram: " + e.getMessage(), e));
            return;
        }
        posted++;
    }

    private static void failed(SendOperation op, Throwable error) {
        op.destination.release();
        op.sink.error(error);
    }

    private void onSent(SendOperation op, int status, int vendorErr) {
        freeSendSlots[freeSendCount++] = op.slot;
        op.destination.release();
        if (status == 0) {
            metrics.datagram(DatagramOutcome.SENT, op.data.length);
            op.sink.success();
        } else {
            metrics.datagram(DatagramOutcome.SEND_FAILED, 0);
            WcStatus s = WcStatus.of(status);
            op.sink.error(closed && s == WcStatus.WR_FLUSH_ERR ? closedError() : new RdmaCompletionException(
                    op.hasImmediate ? OperationType.SEND_WITH_IMMEDIATE : OperationType.SEND, status,
                    s == null ? "UNKNOWN" : s.name(), vendorErr, "a datagram send"));
        }
        SendOperation next;
        while (!closed && freeSendCount > 0 && (next = waitingSends.poll()) != null) {
            post(next);
        }
    }

    // ---------------------------------------------------------------- completions

    @Override
    public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm, int wcFlags) {
        OperationType type = p.type;
        Object op = p.operation;
        int slot = p.receiveIndex;
        int sourceQpn = cqh.cq.sourceQpn(); // valid only now, inside the poll
        pending.free(p);
        posted--;
        if (type == OperationType.RECEIVE) {
            onReceive(slot, status, byteLen, imm, wcFlags, sourceQpn);
        } else {
            onSent((SendOperation) op, status, vendorErr);
        }
        if (closed && posted == 0) {
            finish();
        }
    }

    @Override
    public void pollerFailed(Throwable cause) {
        EngineLog.error(this + ": its completion poller failed; closing", cause);
        posted = 0; // nothing will complete any more
        dispose();
    }

    /** The device broke the QP (an asynchronous QP error): nothing more can be sent or received on it. */
    @Override
    public void queuePairFailed(io.reactiverdma.verbs.AsyncEventType type) {
        EngineLog.warn(this + ": the device reported " + type + " for its QP; closing");
        dispose();
    }

    /** The device resources this endpoint uses (the engine closes it when the device goes). */
    public DeviceResources device() {
        return device;
    }

    @Override
    public int recheckCredits() {
        return CompletionPoller.DONE;
    }

    // ---------------------------------------------------------------- multicast

    @Override
    public Flux<RdmaDatagramMessage> join(InetSocketAddress group) {
        Objects.requireNonNull(group, "group");
        return Flux.<RdmaDatagramMessage>create(sink -> {
            InetAddress address = group.getAddress();
            if (address == null || !address.isMulticastAddress()) {
                sink.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, group + " is not a multicast address"));
                return;
            }
            if (closing.get()) {
                sink.error(closedError());
                return;
            }
            DatagramStream s = new DatagramStream(sink);
            MulticastGroup g = new MulticastGroup(new InetSocketAddress(address, 0), s);
            if (groups.putIfAbsent(address, g) != null) {
                sink.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, "group " + address.getHostAddress()
                        + " is already joined by this endpoint"));
                return;
            }
            poller.execute(() -> {
                if (closed) {
                    s.complete();
                } else {
                    groupStreams.put(address, s);
                    s.drain();
                }
            });
            sink.onRequest(n -> poller.execute(s::drain));
            sink.onDispose(() -> {
                s.cancel();
                // Gone for senders and joined(..) at once; rdma_leave_multicast follows on the rdma_cm thread.
                groups.remove(address, g);
                poller.execute(() -> {
                    groupStreams.remove(address, s);
                    s.cancelled();
                });
                cm.execute(() -> leave(g));
            });
            cm.execute(() -> {
                joinQueue.add(g);
                if (joinInFlight == null) {
                    nextJoin();
                }
            });
        }, FluxSink.OverflowStrategy.BUFFER).doOnDiscard(RdmaDatagramMessage.class, RdmaDatagramMessage::release);
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

    /** rdma_cm thread: joins are made one at a time, so MULTICAST_JOIN and MULTICAST_ERROR name theirs. */
    private void nextJoin() {
        MulticastGroup g;
        while ((g = joinQueue.poll()) != null) {
            if (g.left || closing.get()) {
                continue;
            }
            try {
                dataId.joinMulticast(g.group);
                joinInFlight = g;
                return;
            } catch (RuntimeException e) {
                joinFailed(g, 0, "rdma_join_multicast(" + g.group.getAddress().getHostAddress() + ") failed: " + e.getMessage());
            }
        }
    }

    private void onDataEvent(CmEventInfo e) {
        switch (e.type()) {
            case MULTICAST_JOIN -> {
                MulticastGroup g = joinInFlight;
                joinInFlight = null;
                if (g != null) {
                    joinedGroup(g, e.datagram());
                }
                nextJoin();
            }
            case MULTICAST_ERROR -> {
                MulticastGroup g = joinInFlight;
                joinInFlight = null;
                if (g != null) {
                    joinFailed(g, e.status(), "joining multicast group " + g.group.getAddress().getHostAddress()
                            + " failed (status " + e.status() + ")");
                } else {
                    EngineLog.warn(this + ": MULTICAST_ERROR (status " + e.status() + ") for a joined group");
                }
                nextJoin();
            }
            case DEVICE_REMOVAL -> dispose();
            default -> EngineLog.debug(this + ": rdma_cm event " + e);
        }
    }

    private void joinedGroup(MulticastGroup g, DatagramRoute route) {
        if (g.left || closing.get()) {
            leaveQuietly(g);
            return;
        }
        try {
            g.destination = track(new Destination(dataId.createAddressHandle(device.pd, route), MULTICAST_QPN, route.qkey(),
                    metrics));
        } catch (RuntimeException ex) {
            leaveQuietly(g);
            joinFailed(g, 0, "joined " + g.group.getAddress().getHostAddress() + " but cannot create its address handle: "
                    + ex.getMessage());
            return;
        }
        metrics.multicastGroups(1);
        g.joined.tryEmitValue(g.group);
    }

    private void joinFailed(MulticastGroup g, int status, String message) {
        RdmaMulticastException ex = new RdmaMulticastException(g.group, status, message);
        g.left = true;
        groups.remove(g.group.getAddress(), g);
        g.joined.tryEmitError(ex);
        poller.execute(() -> {
            groupStreams.remove(g.group.getAddress(), g.stream);
            g.stream.error(ex);
        });
    }

    /** rdma_cm thread: the subscriber cancelled (or the endpoint closes). */
    private void leave(MulticastGroup g) {
        if (g.left) {
            return;
        }
        g.left = true;
        groups.remove(g.group.getAddress(), g);
        Destination d = g.destination;
        if (d != null) {
            leaveQuietly(g);
            metrics.multicastGroups(-1);
            d.retire(); // destroyed once the sends that hold it are done
        }
        g.joined.tryEmitError(new InvalidRequestException(Reason.NOT_JOINED, "group " + g.group + " was left"));
    }

    private void leaveQuietly(MulticastGroup g) {
        try {
            dataId.leaveMulticast(g.group);
        } catch (RuntimeException e) {
            EngineLog.error(this + ": rdma_leave_multicast(" + g.group + ") failed", e);
        }
    }

    // ---------------------------------------------------------------- resolution by peers

    /** A peer resolves this endpoint (SIDR request): the answer names the data QP; the request's id goes. */
    private void onListenEvent(CmEventInfo e) {
        if (e.type() != io.reactiverdma.cm.CmEventType.CONNECT_REQUEST) {
            return;
        }
        CmId request = e.id();
        try {
            if (closing.get()) {
                request.reject(new byte[0]);
            } else {
                request.acceptDatagram(qp.qpNum());
            }
        } catch (RuntimeException ex) {
            EngineLog.error(this + ": answering a SIDR request failed", ex);
        } finally {
            request.close();
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
        for (MulticastGroup g : groups.values()) {
            leave(g);
        }
        poller.execute(this::closeOnPoller);
    }

    private void closeOnPoller() {
        closed = true;
        SendOperation op;
        while ((op = waitingSends.poll()) != null) {
            failed(op, closedError());
        }
        if (unicast != null) {
            unicast.complete();
            unicast = null;
        }
        for (DatagramStream s : groupStreams.values()) {
            s.complete();
        }
        groupStreams.clear();
        if (posted == 0) {
            finish();
        } else {
            try {
                qp.toError(); // everything posted flushes; the last flush finishes the close
            } catch (RuntimeException e) {
                EngineLog.error(this + ": moving the QP to ERR failed", e);
                finish();
            }
        }
    }

    /** Poller thread, once nothing posted is left: the QP, the id, the handles and the memory go. */
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

    /** rdma_cm thread: releases in reverse order of creation whatever exists. */
    private void releaseNative() {
        if (qp != null) {
            device.unregister(qp.qpNum(), this);
        }
        try {
            dataId.destroyQueuePair();
        } catch (RuntimeException e) {
            EngineLog.error(this + ": rdma_destroy_qp failed", e);
        }
        unicastHandles.close();
        Destination d;
        while ((d = destinations.poll()) != null) {
            d.retire();
        }
        deregister(sendRegistration);
        deregister(receiveRegistration);
        if (cqh != null) {
            device.releaseCq(cqh, sendDepth + receiveDepth);
        }
        dataId.close();
        if (!listenId.isClosed()) {
            listenId.close();
        }
    }

    private void deregister(Registration r) {
        if (r != null) {
            try {
                r.deregister();
            } catch (RuntimeException e) {
                EngineLog.error(this + ": ibv_dereg_mr failed", e);
            }
        }
    }

    private static InvalidRequestException released() {
        return new InvalidRequestException(Reason.BUFFER_RELEASED,
                "reply(..) needs the datagram unreleased: its buffer holds the sender's address");
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
