package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import io.reactiverdma.reactive.impl.verbs.ProtectionDomain;
import reactor.core.publisher.Mono;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;

/**
 * Where a datagram endpoint's sends go: peers resolved by SIDR (one resolution shared by the sends that miss
 * meanwhile, resolved again once older than {@code DATAGRAM_PEER_REFRESH}: a peer that restarted has a new QP
 * number), senders replied to (an address handle made from the received GRH), both in one cache bounded by
 * {@code DATAGRAM_ADDRESS_HANDLES} (least recently used evicted, counted by the address-handle metric), and
 * the joined groups' handles. Every destination it hands out is held for one send; retired ones (evicted, left,
 * closed) are destroyed when their last send lets go. Any thread; handles are made on the rdma_cm thread.
 */
final class PeerDirectory {
    /** The Q_Key rdma_cm gives UD QPs of the UDP port space ({@code RDMA_UDP_QKEY}), used for replies. */
    static final int UDP_QKEY = 0x01234567;

    private final CmEventLoop cm;
    private final CmId dataId;
    private final ProtectionDomain pd;
    private final EngineMetrics metrics;
    private final InetSocketAddress localAddress;
    private final BooleanSupplier closing;
    private final int resolveTimeoutMs;
    private final long refreshNanos;
    private final AddressHandleCache handles;
    /** Resolutions of peers under way (rdma_cm thread), shared by the sends that wait for them. */
    private final Map<InetSocketAddress, Mono<Destination>> resolving = new ConcurrentHashMap<>();
    /** The groups' handles: retired (destroyed) when the endpoint closes. */
    private final Queue<Destination> groups = new ConcurrentLinkedQueue<>();

    private record ReplyKey(InetAddress address, int qpn) {
    }

    PeerDirectory(CmEventLoop cm, CmId dataId, ProtectionDomain pd, RdmaTransportConfig config, EngineMetrics metrics,
            InetSocketAddress localAddress, BooleanSupplier closing) {
        this.cm = cm;
        this.dataId = dataId;
        this.pd = pd;
        this.metrics = metrics;
        this.localAddress = localAddress;
        this.closing = closing;
        this.resolveTimeoutMs = (int) Math.min(Integer.MAX_VALUE, config.option(RdmaOption.CONNECT_TIMEOUT).toMillis());
        this.refreshNanos = config.option(RdmaOption.DATAGRAM_PEER_REFRESH).toNanos();
        this.handles = new AddressHandleCache(config.option(RdmaOption.DATAGRAM_ADDRESS_HANDLES), metrics);
    }

    InetSocketAddress localAddress() {
        return localAddress;
    }

    /**
     * At subscription: {@code peer}'s cached destination, held for one send (and resolved again in the
     * background when its answer is older than the refresh), or the shared resolution of it. A destination
     * evicted between its resolution and the hold is resolved again.
     */
    Mono<Destination> peer(InetSocketAddress peer) {
        return Mono.defer(() -> {
            Destination d = handles.hold(peer);
            if (d != null) {
                if (System.nanoTime() - d.createdNanos > refreshNanos && d.claimRefresh()) {
                    resolving.computeIfAbsent(peer, this::resolve).subscribe(null, e -> handles.remove(peer, d));
                }
                return Mono.just(d);
            }
            return resolving.computeIfAbsent(peer, this::resolve).flatMap(r -> r.hold() ? Mono.just(r) : peer(peer));
        });
    }

    /**
     * At subscription: the cached handle for the sender of a datagram ({@code sender}, QP {@code qpn}), held
     * for one reply, or a new one made from its {@code grh} (copied: the datagram may be released by then).
     */
    Mono<Destination> replyTo(InetSocketAddress sender, int qpn, byte[] grh) {
        ReplyKey key = new ReplyKey(sender.getAddress(), qpn);
        return Mono.defer(() -> {
            Destination known = handles.hold(key);
            if (known != null) {
                return Mono.just(known);
            }
            return Mono.<Destination>create(sink -> cm.execute(() -> {
                if (closing.getAsBoolean()) {
                    sink.error(EngineDatagramEndpoint.closedError());
                    return;
                }
                try {
                    ByteBuffer header = ByteBuffer.allocateDirect(Grh.SIZE).put(grh).flip();
                    Destination made = new Destination(dataId.createReplyAddressHandle(pd, header, qpn), qpn, UDP_QKEY,
                            metrics);
                    handles.put(key, made);
                    sink.success(made);
                } catch (RuntimeException e) {
                    sink.error(new RdmaException("cannot answer " + sender + ": " + e.getMessage(), e));
                }
            })).flatMap(made -> made.hold() ? Mono.just(made) : replyTo(sender, qpn, grh)); // evicted at once
        });
    }

    /**
     * One resolution of {@code peer}, shared by the sends that miss the cache meanwhile; once it is over
     * (its answer is in the cache, or it failed) the next miss resolves again.
     */
    private Mono<Destination> resolve(InetSocketAddress peer) {
        return Mono.<Destination>create(sink -> cm.execute(() -> new PeerResolver(this, cm, peer, resolveTimeoutMs, sink)
                        .start()))
                .doFinally(s -> resolving.remove(peer))
                .cache();
    }

    /**
     * rdma_cm thread: the address handle for {@code peer}'s resolved route, cached (replacing an older answer),
     * or null once the endpoint closes.
     */
    Destination destinationFor(InetSocketAddress peer, CmId id, DatagramRoute route) {
        if (closing.getAsBoolean()) {
            return null;
        }
        Destination d = new Destination(id.createAddressHandle(pd, route), route.remoteQpn(), route.qkey(), metrics);
        return handles.put(peer, d) ? d : null;
    }

    /** rdma_cm thread: the destination of a joined group (retired when it is left, or when the endpoint closes). */
    Destination group(DatagramRoute route) {
        Destination d = new Destination(dataId.createAddressHandle(pd, route),
                io.reactiverdma.reactive.RdmaDatagramEndpoint.MULTICAST_QPN, route.qkey(), metrics);
        groups.add(d);
        return d;
    }

    /** rdma_cm thread, the endpoint closing: every handle is retired (destroyed once its sends let go). */
    void close() {
        handles.close();
        Destination d;
        while ((d = groups.poll()) != null) {
            d.retire();
        }
    }
}
