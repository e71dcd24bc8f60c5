package io.reactiverdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.rsocket.RSocketErrorException;
import io.rsocket.exceptions.ConnectionErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import io.rsocket.frame.FrameHeaderCodec;
import io.rsocket.internal.BaseDuplexConnection;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

import java.net.SocketAddress;
import java.nio.channels.ClosedChannelException;

/**
 * RSocket's {@link io.rsocket.DuplexConnection} over one RDMA connection: one frame is one two-sided RDMA
 * message, without a length prefix (a SEND keeps its boundaries).
 *
 * <p>Sending: {@link #sendFrame} only queues (thread-safe, never blocks); stream-0 frames (SETUP, KEEPALIVE,
 * LEASE, ERROR, METADATA_PUSH) go ahead of queued data frames. One streaming send drains the queue for the
 * connection's life, taking frames as fast as send-queue slots and the peer's credits allow.
 *
 * <p>Receiving: each message becomes a {@link ReceivedFrame} over its receive buffer (no copy; fragments
 * excepted, see {@link #writableCopy}; the frame object is recycled, see {@link ReceivedFrames}), released
 * after RSocket's {@code onNext}; what RSocket or the application retains keeps its receive buffer until
 * released. The engine posts receives for demand only, so a consumer that holds every receive buffer stops
 * the peer (with credits) instead of growing a queue. A message that cannot be a frame (shorter than a
 * frame header, or of an unknown frame type) is a malformed peer: this side sends a connection ERROR and
 * closes, and RSocket gets the same ERROR, so its streams end with that {@link ConnectionErrorException}
 * (see {@link #localError}). A frame to send that is larger than the peer's receive buffers ends the
 * connection the same way.
 *
 * <p>Closing: {@link #receive()} errors with {@link ClosedChannelException} when the RDMA connection closes
 * (its cause, when there is one, is the engine's error); {@link #onClose()} completes once the RDMA
 * connection is gone.
 */
final class RdmaDuplexConnection extends BaseDuplexConnection {
    private final RdmaConnection rdma;
    private final ByteBufAllocator alloc;
    /** The recycled frame objects the received messages are handed to RSocket in. */
    private final ReceivedFrames frames;
    private final Mono<Void> closed;
    /** Why this side closed the connection (a malformed or too large frame); null when it did not. */
    private volatile RSocketErrorException failure;
    /** Whether RSocket was given the ERROR frame of {@link #failure} (receive's thread only). */
    private boolean errorDelivered;

    RdmaDuplexConnection(RdmaConnection rdma, ByteBufAllocator alloc) {
        this.rdma = rdma;
        this.alloc = alloc;
        this.frames = new ReceivedFrames(alloc);
        this.closed = Mono.whenDelayError(super.onClose(), rdma.onDispose());
        // The send ends when the sender completes (after sendErrorAndClose's ERROR frame), or fails when the
        // connection closes; either way the RDMA connection is closed after it (idempotent).
        rdma.send(new FrameWriter(sender, rdma.maxMessageSize(), this::frameTooLarge))
                .onErrorResume(e -> Mono.empty())
                .doFinally(s -> rdma.dispose())
                .subscribe();
    }

    @Override
    public Flux<ByteBuf> receive() {
        return rdma.receive()
                .doOnDiscard(RdmaMessage.class, RdmaMessage::release)
                .<ByteBuf>map(this::frame)
                .concatWith(Flux.defer(this::afterClose))
                .onErrorMap(e -> !(e instanceof RSocketErrorException) && !(e instanceof ClosedChannelException),
                        this::closed)
                .transform(Operators.<ByteBuf, ByteBuf>lift((scannable, actual) -> new ReleaseAfterNext(actual)))
                .doOnDiscard(ByteBuf.class, ByteBuf::release);
    }

    private ByteBuf frame(RdmaMessage message) {
        int n = message.length();
        String malformed = null;
        if (n < FrameHeaderCodec.size()) {
            malformed = "a message of " + n + " bytes is not an RSocket frame (a frame header has "
                    + FrameHeaderCodec.size() + ")";
        }
        ReceivedFrame frame = null;
        if (malformed == null) {
            frame = frames.carry(message);
            try {
                FrameHeaderCodec.frameType(frame);
            } catch (IllegalArgumentException e) {
                malformed = "malformed frame: " + e.getMessage();
            }
        }
        if (malformed == null) {
            return FrameHeaderCodec.hasFollows(frame) ? writableCopy(frame) : frame;
        }
        if (frame != null) {
            frame.release();
        } else {
            message.release();
        }
        ConnectionErrorException error = new ConnectionErrorException(malformed);
        sendErrorAndClose(error);
        return localError(error);
    }

    /**
     * The connection-level ERROR this side sent, handed to RSocket as if the peer had sent it: rsocket-java
     * ends its streams with the error of a received ERROR frame, and with a bare ClosedChannelException when
     * the connection just closes, so this is how the requester learns why (a frame too large, a malformed
     * peer). Delivered once.
     */
    private ByteBuf localError(RSocketErrorException error) {
        errorDelivered = true;
        return ErrorFrameCodec.encode(alloc, 0, error);
    }

    /**
     * What follows the last message: the local ERROR (unless delivered already), then ClosedChannelException.
     * The ERROR comes before the RDMA connection's onDispose, so RSocket ends its streams with it.
     */
    private Flux<ByteBuf> afterClose() {
        RSocketErrorException local = failure;
        Flux<ByteBuf> end = Flux.error(closed(null));
        return local == null || errorDelivered ? end : Mono.fromSupplier(() -> localError(local)).concatWith(end);
    }

    /**
     * A fragment, copied: when RSocket reassembles a fragmented payload it rewrites the metadata length in
     * the first fragment's header in place, and a received message is a read-only view of its receive buffer.
     * Only frames with the follows flag are copied (which of them starts a payload is RSocket's state), so
     * whole frames stay zero-copy.
     */
    private ByteBuf writableCopy(ReceivedFrame frame) {
        try {
            ByteBuf copy = alloc.directBuffer(frame.readableBytes());
            return copy.writeBytes(frame, frame.readerIndex(), frame.readableBytes());
        } finally {
            frame.release();
        }
    }

    private Throwable closed(Throwable cause) {
        ClosedChannelException e = new ClosedChannelException();
        if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    private void frameTooLarge(int length) {
        sendErrorAndClose(new ConnectionErrorException("a frame of " + length + " bytes is larger than the peer's "
                + rdma.maxMessageSize() + "-byte receive buffers: fragment with RSocketConnector/RSocketServer"
                + ".fragment(mtu) and an mtu of at most the transport's maxFrameLength()"));
    }

    @Override
    public void sendErrorAndClose(RSocketErrorException e) {
        if (failure == null) {
            failure = e;
        }
        sender.tryEmitFinal(ErrorFrameCodec.encode(alloc, 0, e));
    }

    @Override
    @SuppressWarnings("deprecation") // UnboundedProcessor.dispose: the one call that ends it at once
    protected void doOnClose() {
        rdma.dispose();
        // The streaming send fails and cancels the sender too; this ends it (and releases the frames still
        // queued) even when the send has not subscribed yet or has already ended.
        sender.dispose();
    }

    @Override
    public Mono<Void> onClose() {
        return closed;
    }

    @Override
    public ByteBufAllocator alloc() {
        return alloc;
    }

    @Override
    public SocketAddress remoteAddress() {
        return rdma.remoteAddress();
    }

    @Override
    public String toString() {
        return "RdmaDuplexConnection{local=" + rdma.localAddress() + ", remote=" + rdma.remoteAddress() + '}';
    }
}
