package io.reactiverdma.reactive;

import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * A bound unreliable-datagram endpoint ({@link RdmaDatagram#bind()}): one UD queue pair that sends to peers
 * and multicast groups and receives what they send.
 *
 * <p><b>What is not guaranteed.</b> A datagram can be lost (the receiver had no free receive buffer, its
 * subscriber had not asked for more and all buffers were held, a switch or the peer's device dropped it,
 * the group was left), can arrive out of order relative to datagrams from other senders (and on real
 * fabrics even from the same sender over different paths), and a successful {@link #send} only means the
 * local device transmitted it. Duplicates are not produced by the transport. Drops this side sees are
 * counted in {@link #droppedCount()}; drops elsewhere are only visible to the application (sequence numbers).
 *
 * <p><b>Closing</b> ({@link #dispose()}) leaves every joined group, completes {@link #receive()} and every
 * {@link #join} flux, fails sends not yet transmitted with {@link ConnectionClosedException} (as a closed
 * connection does), and releases the queue pair, its completion queue, the address handles and the receive
 * and send buffers.
 *
 * <p><b>Address handles</b> (one per peer sent to, per sender QP replied to, per group) are kernel objects the
 * device has a limited number of, and peers choose how many distinct senders there are: an endpoint keeps at
 * most {@link RdmaOption#DATAGRAM_ADDRESS_HANDLES} for peers and reply senders, evicting the least recently
 * used (made again when needed), and trusts a resolved peer for {@link RdmaOption#DATAGRAM_PEER_REFRESH}
 * before resolving it again, so a peer that restarted on the same address (a new QP number) is reached again.
 */
public interface RdmaDatagramEndpoint extends Disposable {
    /** The multicast group's "QP number" a group's datagrams name as destination. */
    int MULTICAST_QPN = 0xffffff;

    /** The bound local address (with the actual port when bound to port 0). */
    InetSocketAddress localAddress();

    /** This endpoint's UD queue pair number (peers that resolve this endpoint learn it). */
    int qpNumber();

    /** The largest payload {@link #send} accepts: the port's active MTU minus the 40-byte GRH. */
    int maxMessageSize();

    /**
     * Registered memory of this endpoint's device: the buffers {@link #send(RegisteredBuffer, InetSocketAddress)}
     * sends without a copy.
     */
    RdmaMemory memory();

    /**
     * The datagrams sent to this endpoint's own address (not those of joined groups), demand-driven: a
     * datagram is delivered only when requested; until then it keeps its receive buffer, and with every
     * buffer held, what arrives next is dropped by the device. Each datagram must be
     * {@link RdmaDatagramMessage#release() released}. One subscriber at a time (a second one fails with
     * {@link InvalidRequestException} {@code ALREADY_SUBSCRIBED}); cancelling releases what was not delivered, and datagrams arriving with
     * no subscriber are dropped and counted; one that arrives after {@code subscribe} returned is the
     * subscriber's. A subscriber that cancels while datagrams wait for it (as
     * {@code next()} and {@code blockFirst()} do after the first) gives their buffers back: nothing is lost
     * to a cancelled subscriber. Completes when the endpoint closes.
     */
    Flux<RdmaDatagramMessage> receive();

    /**
     * Sends {@code data} (its remaining bytes, copied before this returns) to {@code peer}, an endpoint
     * listening on the rdma_cm UDP port space at that address (this framework's, or rdma-core's
     * {@code udaddy}), or a multicast group this endpoint has {@link #join joined}. The first send to a peer
     * resolves it (address, route, and rdma_cm's SIDR exchange for its QP number and Q_Key) into an address
     * handle, kept while it is among the {@link RdmaOption#DATAGRAM_ADDRESS_HANDLES} most recently used and
     * resolved again in the background once older than {@link RdmaOption#DATAGRAM_PEER_REFRESH}. Completes
     * empty once the device has transmitted it; fails with {@link InvalidRequestException} before anything is
     * posted when the payload is larger than {@link #maxMessageSize()} ({@code MESSAGE_TOO_LARGE}) or the group
     * is not joined ({@code NOT_JOINED}); with {@link ConnectionClosedException} when the endpoint is closed;
     * with {@link RdmaConnectException} when the peer cannot be resolved. Cancelling does not recall a
     * datagram already handed to the device.
     */
    Mono<Void> send(ByteBuffer data, InetSocketAddress peer);

    /** {@link #send(ByteBuffer, InetSocketAddress)} with 32 bits of immediate data ({@code SEND_WITH_IMM}). */
    Mono<Void> send(ByteBuffer data, InetSocketAddress peer, int immediate);

    /**
     * Sends the bytes of {@code buffer} to {@code peer} without copying them: the device reads them from the
     * registered memory, so they must not change until the returned {@code Mono} completes. {@code buffer} must
     * come from this engine's {@link RdmaMemory} on this endpoint's device; the caller keeps it (the send holds
     * it until the device is done, so releasing it meanwhile frees its memory only afterwards). Completes and
     * fails like {@link #send(ByteBuffer, InetSocketAddress)}, and fails with {@link InvalidRequestException}
     * before anything is resolved or posted for a buffer of another engine or device ({@code FOREIGN_BUFFER}) or
     * a released one ({@code BUFFER_RELEASED}). Cancelling does not recall a datagram already handed to the
     * device.
     */
    Mono<Void> send(RegisteredBuffer buffer, InetSocketAddress peer);

    /** {@link #send(RegisteredBuffer, InetSocketAddress)} with 32 bits of immediate data ({@code SEND_WITH_IMM}). */
    Mono<Void> send(RegisteredBuffer buffer, InetSocketAddress peer, int immediate);

    /**
     * Sends {@code data} with {@code immediate} back to the sender of {@code received} (an address handle made
     * from its GRH, shared by the replies to the same sender QP while it is among the
     * {@link RdmaOption#DATAGRAM_ADDRESS_HANDLES} most recently used), which need not listen on rdma_cm: this is how a service answers
     * rdma-core's {@code udaddy} client. Completes and fails like {@link #send}. Call it before releasing
     * {@code received}.
     */
    Mono<Void> reply(RdmaDatagramMessage received, ByteBuffer data, int immediate);

    /**
     * Joins the multicast {@code group} (an IPv4 or IPv6 multicast address; the port is ignored) and emits the
     * datagrams sent to it, demand-driven and released like {@link #receive()}'s. The join happens on
     * subscription; sending to the group works once it is joined (see {@link #joined(InetSocketAddress)}).
     * Fails with {@link InvalidRequestException} ({@code ILLEGAL_ARGUMENT}) for an address that is not
     * multicast or a group already joined, and with {@link RdmaMulticastException} when rdma_cm refuses the
     * join. Cancelling leaves the group; completes when the endpoint closes. Several groups may be joined at
     * once.
     */
    Flux<RdmaDatagramMessage> join(InetSocketAddress group);

    /**
     * Emits {@code group} once it is joined (right away when it is), so sends to it can start: a datagram sent to
     * the group after it emitted reaches this endpoint's {@code join(group)} stream (unless dropped on the way,
     * as any datagram may be). Errors with {@link InvalidRequestException} ({@code NOT_JOINED}) when the group
     * is not being joined or was left, and with {@link RdmaMulticastException} when the join failed.
     */
    Mono<InetSocketAddress> joined(InetSocketAddress group);

    /** Datagrams this side dropped: arrived with no subscriber for them, or a receive that completed in error. */
    long droppedCount();

    /** Completes when the endpoint is closed and everything it held is released. */
    Mono<Void> onDispose();

    /** Disposes and waits at most 30 s for {@link #onDispose()} (IllegalStateException on timeout). */
    default void disposeNow() {
        disposeNow(Duration.ofSeconds(30));
    }

    /** Disposes and waits at most {@code timeout} for {@link #onDispose()} (IllegalStateException on timeout). */
    default void disposeNow(Duration timeout) {
        dispose();
        onDispose().block(timeout);
    }
}
