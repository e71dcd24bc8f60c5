package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaMulticastException;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * A datagram endpoint's multicast groups: which are joined or being joined (any thread reads it), and the
 * joins themselves on the rdma_cm thread, one at a time, so MULTICAST_JOIN and MULTICAST_ERROR name theirs.
 * A joined group gets its destination (for sends to it); a left one is left on rdma_cm and its destination
 * retired; a failed join fails its {@code join} subscriber and its {@code joined} with
 * {@link RdmaMulticastException}.
 */
final class MulticastMembership {
    private final String description;
    private final CmEventLoop cm;
    private final CmId dataId;
    private final PeerDirectory peers;
    private final DatagramReceiver receiver;
    private final CompletionPoller poller;
    private final EngineMetrics metrics;
    private final Map<InetAddress, MulticastGroup> groups = new ConcurrentHashMap<>();
    // rdma_cm thread.
    private final ArrayDeque<MulticastGroup> joinQueue = new ArrayDeque<>();
    @Nullable
    private MulticastGroup joinInFlight;
    private boolean closing;

    MulticastMembership(String description, CmEventLoop cm, CmId dataId, PeerDirectory peers, DatagramReceiver receiver,
            EngineMetrics metrics) {
        this.description = description;
        this.cm = cm;
        this.dataId = dataId;
        this.peers = peers;
        this.receiver = receiver;
        this.poller = receiver.poller();
        this.metrics = metrics;
    }

    /** Any thread: the group being joined or joined at {@code address}, or null. */
    @Nullable
    MulticastGroup get(InetAddress address) {
        return groups.get(address);
    }

    /**
     * {@code join(group)}: checked, then joined on subscription (refused when the endpoint is {@code closing});
     * cancelling leaves the group.
     */
    Flux<RdmaDatagramMessage> join(InetSocketAddress group, BooleanSupplier closing) {
        return Flux.<RdmaDatagramMessage>create(sink -> {
            InetAddress address = group.getAddress();
            if (address == null || !address.isMulticastAddress()) {
                sink.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, group + " is not a multicast address"));
                return;
            }
            if (closing.getAsBoolean()) {
                sink.error(EngineDatagramEndpoint.closedError());
                return;
            }
            DatagramStream s = receiver.newStream(sink);
            MulticastGroup g = new MulticastGroup(new InetSocketAddress(address, 0), s);
            if (!join(g)) {
                sink.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, "group " + address.getHostAddress()
                        + " is already joined by this endpoint"));
                return;
            }
            sink.onRequest(n -> poller.execute(() -> s.request(n)));
            sink.onDispose(() -> {
                s.cancel();
                cancelled(g);
            });
        }, FluxSink.OverflowStrategy.BUFFER).doOnDiscard(RdmaDatagramMessage.class, RdmaDatagramMessage::release);
    }

    /** Any thread: starts joining {@code g}; false when its group is joined already by this endpoint. */
    private boolean join(MulticastGroup g) {
        InetAddress address = g.group.getAddress();
        if (groups.putIfAbsent(address, g) != null) {
            return false;
        }
        poller.execute(() -> receiver.joinStream(address, g.stream));
        cm.execute(() -> {
            joinQueue.add(g);
            if (joinInFlight == null) {
                nextJoin();
            }
        });
        return true;
    }

    /** Any thread: {@code g}'s subscriber left; gone for senders at once, left on the rdma_cm thread. */
    private void cancelled(MulticastGroup g) {
        InetAddress address = g.group.getAddress();
        groups.remove(address, g);
        poller.execute(() -> receiver.leaveStream(address, g.stream, null));
        cm.execute(() -> leave(g));
    }

    private void nextJoin() {
        MulticastGroup g;
        while ((g = joinQueue.poll()) != null) {
            if (g.left || closing) {
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

    /** rdma_cm thread: an event of the data id that concerns joins. */
    void onJoinEvent(CmEventInfo e) {
        MulticastGroup g = joinInFlight;
        joinInFlight = null;
        switch (e.type()) {
            case MULTICAST_JOIN -> {
                if (g != null) {
                    joined(g, e.datagram());
                }
            }
            case MULTICAST_ERROR -> {
                if (g != null) {
                    joinFailed(g, e.status(), "joining multicast group " + g.group.getAddress().getHostAddress()
                            + " failed (status " + e.status() + ")");
                } else {
                    EngineLog.warn(description + ": MULTICAST_ERROR (status " + e.status() + ") for a joined group");
                }
            }
            default -> {
                joinInFlight = g; // not a join's event
                return;
            }
        }
        nextJoin();
    }

    private void joined(MulticastGroup g, DatagramRoute route) {
        if (g.left || closing) {
            leaveQuietly(g);
            return;
        }
        try {
            g.destination = peers.group(route);
        } catch (RuntimeException ex) {
            leaveQuietly(g);
            joinFailed(g, 0, "joined " + g.group.getAddress().getHostAddress() + " but cannot create its address handle: "
                    + ex.getMessage());
            return;
        }
        metrics.multicastGroups(1);
        // On the poller, after the joinStream task handed over when the join began: a datagram sent once joined()
        // emitted then finds the group's stream, even when the poller runs late (it polls before it runs handed-
        // over work, so it would have dropped the datagram as nobody's).
        poller.execute(() -> g.joined.tryEmitValue(g.group));
    }

    private void joinFailed(MulticastGroup g, int status, String message) {
        RdmaMulticastException ex = new RdmaMulticastException(g.group, status, message);
        g.left = true;
        InetAddress address = g.group.getAddress();
        groups.remove(address, g);
        g.joined.tryEmitError(ex);
        poller.execute(() -> receiver.leaveStream(address, g.stream, ex));
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
            EngineLog.error(description + ": rdma_leave_multicast(" + g.group + ") failed", e);
        }
    }

    /** rdma_cm thread, the endpoint closing: every group is left; no join starts any more. */
    void leaveAll() {
        closing = true;
        for (MulticastGroup g : new ArrayList<>(groups.values())) {
            leave(g);
        }
    }
}
