package io.reactiverdma.reactive;

import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.nio.ByteBuffer;

/**
 * One reliable-connected RDMA connection (an RC queue pair set up by rdma_cm). Every operation is lazy: it is
 * checked and posted when its {@code Mono} is subscribed, and its signal comes from the completion-poller
 * thread (or the configured callback scheduler): do not block in it.
 *
 * <p>Common to every operation's {@code Mono}:
 * <ul>
 *   <li>it completes when the device reports the work request's successful completion;</li>
 *   <li>it fails with {@link InvalidRequestException} before anything is posted when the arguments cannot
 *       work (the reason says why); with {@link RdmaCompletionException} when the completion has an error
 *       status; with {@link ConnectionClosedException} when the connection closed first (the operation was
 *       refused, or posted and flushed);</li>
 *   <li>when the send queue is full it waits for a slot (queued in order, not failed);</li>
 *   <li>cancelling it (or a {@code timeout}) stops the signal, not the work request: buffers it uses stay
 *       held until the device reports it done.</li>
 * </ul>
 * Disposing closes the connection: it disconnects (the QP moves to its error state) and fails what is
 * pending as its flushed completions arrive (what never flushes within a few seconds is failed once the QP
 * is destroyed); then the QP and the rdma_cm id are destroyed, {@link #receive()} gets the messages that
 * arrived before the close and completes, the receive buffers go back to the pool, and last
 * {@link ConnectionEvent.Type#CLOSED} is emitted and {@link #onDispose()} completes.
 */
public interface RdmaConnection extends Disposable {
    /**
     * The two-sided messages the peer sends, in order. Receive buffers are posted only for the demand the
     * subscriber signalled (and never more than {@link RdmaOption#RECEIVE_QUEUE_DEPTH}); each message must be
     * {@link RdmaMessage#release() released}. When the connection closes, the messages that arrived before
     * the close are still delivered (as demand allows), then it completes; it errors instead with the
     * {@link RdmaCompletionException} that closed the connection when an operation's completion error did
     * (the QP is then in its error state). One subscriber at a time: a second concurrent one gets an
     * {@link InvalidRequestException} {@code ALREADY_SUBSCRIBED}. Cancelling stops posting new receives (those already posted stay until
     * the close flushes them; messages that arrive meanwhile wait for the next subscriber). Messages that an
     * operator after this {@code Flux} drops (for example {@code filter}, or a cancelled {@code publishOn}
     * queue) must be released by the application: add
     * {@code .doOnDiscard(RdmaMessage.class, RdmaMessage::release)} at the end of the chain.
     */
    Flux<RdmaMessage> receive();

    /**
     * The peer's messages, decoded as they arrive, without a message handle per message: {@code decoder} is
     * called once per message, in order, with a message that is valid only during the call (its
     * {@link RdmaMessage#data()} is a read-only view of the receive buffer, which is reposted as soon as the
     * decoder returns: copy what you need, keep nothing of the message; using it afterwards throws
     * {@link InvalidRequestException} {@code BUFFER_RELEASED}; {@link RdmaMessage#release()} does nothing).
     * Emits what {@code decoder} returns. Demand, ordering, completion, errors, the single subscriber and
     * cancellation are as for {@link #receive()}; receives are posted only for demand, and buffers come back
     * without any release by the application. A decoder that throws, or returns null, fails the
     * {@code Flux} with that error (the message's buffer is taken back). The engine calls the decoder on the
     * connection's poller thread: it must not block. This is the allocation-free way to consume a stream
     * of messages: the engine creates nothing per message (with a callback scheduler configured, one task
     * per message hands the result over).
     *
     * <p>The default implementation, for other transports, decodes each {@link #receive()} message and
     * releases it.
     *
     * @throws NullPointerException when {@code decoder} is null
     */
    default <T> Flux<T> receive(java.util.function.Function<? super RdmaMessage, ? extends T> decoder) {
        java.util.Objects.requireNonNull(decoder, "decoder");
        return receive().map(m -> {
            try {
                return decoder.apply(m);
            } finally {
                m.release();
            }
        });
    }

    /**
     * Sends {@code data} (from its position to its limit, not changed) as one message. The bytes are copied
     * (inline or into a pooled registered buffer) when the {@code Mono} is subscribed: the caller may reuse
     * {@code data} after subscribing.
     * With credit flow control, waits for a credit from the peer.
     *
     * @throws NullPointerException when {@code data} is null
     */
    Mono<Void> send(ByteBuffer data);

    /** Sends the whole registered buffer as one message, without copying it. */
    Mono<Void> send(RegisteredBuffer data);

    /**
     * Sends every buffer {@code messages} emits, each as one message, in order. Requests from upstream only
     * as send-queue slots and (with flow control) peer credits free up, so a fast producer is slowed to the
     * peer's pace. Completes when upstream completed and every message's send completed; fails on the
     * first failed send (cancelling upstream) or on an upstream error. Cancelling cancels upstream.
     */
    Mono<Void> send(Publisher<ByteBuffer> messages);

    /** As {@link #send(ByteBuffer)}, with 32-bit immediate data the receiver sees in {@link RdmaMessage#immediate()}. */
    Mono<Void> sendWithImmediate(ByteBuffer data, int immediate);

    /** RDMA WRITE of the whole {@code local} buffer to the start of {@code remote} (one-sided: the peer's CPU is not involved). */
    Mono<Void> write(RegisteredBuffer local, RemoteRegion remote);

    /**
     * RDMA WRITE with immediate: as {@link #write}, and the peer's {@link #receive()} gets a message of length
     * 0 carrying {@code immediate} once the data is in place (it consumes one of the peer's receives).
     */
    Mono<Void> writeWithImmediate(RegisteredBuffer local, RemoteRegion remote, int immediate);

    /** RDMA READ of {@code local.length()} bytes from the start of {@code remote} into {@code local}. */
    Mono<Void> read(RegisteredBuffer local, RemoteRegion remote);

    /**
     * Atomic compare-and-swap on the 8-byte, 8-byte aligned {@code remote} word: if it equals {@code expect}
     * it becomes {@code swap}. Emits the word's previous value (the swap happened iff it equals
     * {@code expect}).
     *
     * <p>The word is a 64-bit integer in the byte order of the host that owns it (little-endian on x86 and
     * ARM hosts): the owner reads and initialises it with {@code buffer().order(ByteOrder.nativeOrder())},
     * not with the big-endian default of {@link RegisteredBuffer#buffer()}.
     */
    Mono<Long> compareAndSwap(RemoteRegion remote, long expect, long swap);

    /**
     * Atomic fetch-and-add of {@code delta} to the 8-byte, 8-byte aligned {@code remote} word; emits its
     * previous value. The word's byte order is the owning host's native order, as for
     * {@link #compareAndSwap}.
     */
    Mono<Long> fetchAndAdd(RemoteRegion remote, long delta);

    /**
     * Exposes {@code buffer} (all of it) to this connection's peer only, with {@code access}: binds a type 2
     * memory window onto it for this connection's queue pair. Emits the {@link ExposedRegion} (whose
     * {@link ExposedRegion#remoteRegion()} is what to hand to the peer) once the bind has completed, so the
     * peer may use it as soon as it has it. The buffer needs no remote access of its own: memory from
     * {@link RdmaMemory} (pooled, or registered with no {@link RemoteAccess} at all) can be exposed, and is
     * reachable remotely through its windows only. The buffer is held until the region is revoked; it is
     * revoked by {@link ExposedRegion#revoke()} or when the connection closes.
     *
     * <p>Fails with {@link InvalidRequestException} before anything is posted: {@code ILLEGAL_ARGUMENT} when
     * no access is named, {@code NOT_SUPPORTED} when the device has no type 2 memory windows,
     * {@code FOREIGN_BUFFER} or {@code BUFFER_RELEASED} as for other operations;
     * with {@link RdmaException} when the device refuses to allocate a window; with
     * {@link RdmaCompletionException} when the bind fails (the connection then closes); with
     * {@link ConnectionClosedException} when the connection closed before the bind. Cancelling before the
     * bind completed revokes the region as soon as it is bound.
     *
     * @throws NullPointerException when {@code buffer} or {@code access} is null
     */
    Mono<ExposedRegion> expose(RegisteredBuffer buffer, RemoteAccess... access);

    /**
     * The connection's state changes: every rdma_cm event that concerns it, then {@link ConnectionEvent.Type#CLOSED}.
     * Replays every event so far to each subscriber, then completes after CLOSED.
     */
    Flux<ConnectionEvent> events();

    /**
     * The private data the peer's application sent: on a server's connection the client's
     * ({@link RdmaClient#privateData(byte[])}), on a client's the server's accept data
     * ({@link Admission#accept(byte[])}). A copy; empty when none.
     */
    default byte[] peerPrivateData() {
        return new byte[0];
    }

    /** Registered memory of this connection's device: pooled buffers and user registrations. */
    RdmaMemory memory();

    /** The largest message {@link #send} accepts: the peer's receive buffer size when it told us, else ours. */
    int maxMessageSize();

    /** True when both sides agreed on credit flow control. */
    boolean creditFlowControl();

    /**
     * This side's address. Known once connected and kept after close; null only for a connection that closed
     * before it was established.
     */
    InetSocketAddress localAddress();

    /**
     * The peer's address. Known once connected and kept after close; null only for a connection that closed
     * before it was established.
     */
    InetSocketAddress remoteAddress();

    /** Completes (never errors) once the connection is closed and everything it held was released. */
    Mono<Void> onDispose();

    /** Closes the connection (asynchronously: see {@link #onDispose()}). Idempotent. */
    @Override
    void dispose();

    /** Disposes and waits at most 30 s for {@link #onDispose()} (IllegalStateException on timeout). */
    default void disposeNow() {
        disposeNow(Duration.ofSeconds(30));
    }

    /** Disposes and waits at most {@code timeout} for {@link #onDispose()} (IllegalStateException on timeout). */
    default void disposeNow(Duration timeout) {
        java.util.Objects.requireNonNull(timeout, "timeout");
        dispose();
        onDispose().block(timeout);
    }
}
