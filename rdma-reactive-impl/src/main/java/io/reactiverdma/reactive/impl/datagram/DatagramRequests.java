package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaDatagramMessage;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import reactor.core.publisher.Mono;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Objects;
import java.util.function.BooleanSupplier;

/**
 * A datagram endpoint's sends and replies, from the API call to the poller: each is checked before anything
 * is resolved or posted (size, closed, a foreign or released buffer, a group not joined), its destination
 * found and held ({@link PeerDirectory}, or the joined group's), and it is handed to the
 * {@link DatagramSender}. A {@code ByteBuffer}'s bytes are copied when it is called (the API's promise; the
 * copy is staged into a send slot at post time); a registered buffer is not copied at all. Any thread.
 */
final class DatagramRequests {
    private final String description;
    private final int maxMessageSize;
    private final BufferPool pool;
    private final DatagramReceiver receiver;
    private final DatagramSender sender;
    private final PeerDirectory peers;
    private final MulticastMembership groups;
    private final BooleanSupplier closing;

    DatagramRequests(String description, int maxMessageSize, BufferPool pool, DatagramReceiver receiver,
            DatagramSender sender, PeerDirectory peers, MulticastMembership groups, BooleanSupplier closing) {
        this.description = description;
        this.maxMessageSize = maxMessageSize;
        this.pool = pool;
        this.receiver = receiver;
        this.sender = sender;
        this.peers = peers;
        this.groups = groups;
        this.closing = closing;
    }

    Mono<Void> send(ByteBuffer data, InetSocketAddress peer, boolean hasImmediate, int immediate) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(peer, "peer");
        byte[] copy;
        try {
            checkSendable(data.remaining());
            copy = copy(data);
        } catch (RdmaException e) { // too large, or closed: refused before anything is resolved or posted
            return Mono.error(e);
        }
        return send(copy, null, copy.length, peer, hasImmediate, immediate);
    }

    Mono<Void> send(RegisteredBuffer buffer, InetSocketAddress peer, boolean hasImmediate, int immediate) {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(peer, "peer");
        EngineBuffer b;
        try {
            b = local(buffer);
            checkSendable(b.length());
        } catch (RdmaException e) {
            return Mono.error(e);
        }
        return send(null, b, b.length(), peer, hasImmediate, immediate);
    }

    private Mono<Void> send(@Nullable byte[] copy, @Nullable EngineBuffer buffer, int length, InetSocketAddress peer, boolean hasImmediate,
            int immediate) {
        if (peer.isUnresolved()) {
            return Mono.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, "peer " + peer + " does not resolve"));
        }
        InetAddress address = peer.getAddress();
        if (address.isMulticastAddress()) {
            MulticastGroup g = groups.get(address);
            if (g == null || g.destination == null) {
                return Mono.error(notJoined(address));
            }
            return Mono.defer(() -> {
                Destination d = g.destination;
                return d.hold() ? post(copy, buffer, length, d, hasImmediate, immediate) : Mono.error(notJoined(address));
            });
        }
        return peers.peer(peer).flatMap(d -> post(copy, buffer, length, d, hasImmediate, immediate));
    }

    Mono<Void> reply(RdmaDatagramMessage received, ByteBuffer data, int immediate) {
        Objects.requireNonNull(received, "received");
        Objects.requireNonNull(data, "data");
        byte[] copy;
        try {
            checkSendable(data.remaining());
            copy = copy(data);
        } catch (RdmaException e) { // too large, or closed: refused before anything is resolved or posted
            return Mono.error(e);
        }
        if (!(received instanceof EngineDatagram d) || d.receiver() != receiver) {
            return Mono.error(new InvalidRequestException(Reason.ILLEGAL_ARGUMENT, received + " was not received by " + description));
        }
        // The GRH is copied now: the datagram may be released (and its buffer reused) before the handle is made.
        byte[] grh = new byte[Grh.SIZE];
        if (!d.copyGrh(grh)) {
            return Mono.error(new InvalidRequestException(Reason.BUFFER_RELEASED,
                    "reply(..) needs the datagram unreleased: its buffer holds the sender's address"));
        }
        return peers.replyTo(d.sender(), d.senderQpNumber(), grh)
                .flatMap(dest -> post(copy, null, copy.length, dest, true, immediate));
    }

    private void checkSendable(int n) {
        if (n > maxMessageSize) {
            throw new InvalidRequestException(Reason.MESSAGE_TOO_LARGE, "a datagram of " + n + " bytes exceeds "
                    + maxMessageSize + " (the path MTU " + (maxMessageSize + Grh.SIZE) + " minus the 40-byte GRH)");
        }
        if (closing.getAsBoolean()) {
            throw EngineDatagramEndpoint.closedError();
        }
    }

    private static byte[] copy(ByteBuffer data) {
        byte[] copy = new byte[data.remaining()];
        data.duplicate().get(copy);
        return copy;
    }

    /** A buffer of this engine's memory on this endpoint's device, not released. */
    private EngineBuffer local(RegisteredBuffer buffer) {
        if (!(buffer instanceof EngineBuffer b)) {
            throw new InvalidRequestException(Reason.FOREIGN_BUFFER, "the buffer was not made by this engine's "
                    + "RdmaMemory: " + buffer.getClass().getName());
        }
        if (b.pool() != pool) {
            throw new InvalidRequestException(Reason.FOREIGN_BUFFER, "the buffer is registered on another device ("
                    + b.pool() + ") than this endpoint's (" + pool + ")");
        }
        if (b.isReleased()) {
            throw EngineBuffer.released();
        }
        return b;
    }

    private static InvalidRequestException notJoined(InetAddress group) {
        return new InvalidRequestException(Reason.NOT_JOINED, "cannot send to multicast group " + group.getHostAddress()
                + ": this endpoint has not joined it (join(group) and wait for joined(group))");
    }

    /** Hands a send holding {@code destination} to the poller, which posts it with the cycle's others. */
    private Mono<Void> post(@Nullable byte[] copy, @Nullable EngineBuffer buffer, int length, Destination destination, boolean hasImmediate,
            int immediate) {
        return Mono.create(sink -> receiver.poller().execute(() -> sender.submit(
                new DatagramSend(copy, buffer, length, destination, hasImmediate, immediate, sink))));
    }
}
