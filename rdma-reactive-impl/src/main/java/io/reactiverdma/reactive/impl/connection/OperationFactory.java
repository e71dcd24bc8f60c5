package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;

import io.reactiverdma.reactive.ExposedRegion;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.AccessFlags;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.function.Function;
import java.util.Set;

/**
 * The {@code Mono}s and the {@code Flux} of one connection's operations. Each is lazy: on subscription,
 * on the subscriber's thread, the arguments are checked (a typed {@link InvalidRequestException} before
 * anything is allocated or posted), the buffers are held, and the {@link Operation} is handed to the
 * connection's poller thread, which queues and posts it (inline when subscribed on that thread).
 */
final class OperationFactory {
    private final EngineConnection connection;
    private final BufferPool pool;
    private final Scheduler callbacks;
    /** What subscribers hold the connection by; kept reachable by every operation and subscription. */
    private final Object owner;

    OperationFactory(EngineConnection connection, Object owner, BufferPool pool, Scheduler callbacks) {
        this.connection = connection;
        this.owner = owner;
        this.pool = pool;
        this.callbacks = callbacks;
    }

    /** A message from heap or direct bytes: copied at subscription into a pooled registered buffer. */
    Mono<Void> sendCopy(OperationType type, ByteBuffer data, int immediate) {
        Objects.requireNonNull(data, "data");
        return onCallbacks(OperationMono.copy(this, type, data, immediate));
    }

    Mono<Void> send(RegisteredBuffer data) {
        Objects.requireNonNull(data, "data");
        return onCallbacks(OperationMono.registered(this, data));
    }

    /** Subscriber's thread: checks, copies (absolute put: nothing allocated) and holds. */
    Operation copyOperation(OperationType type, ByteBuffer data, int immediate) {
        int n = data.remaining();
        checkMessageSize(n);
        refuseIfClosed();
        EngineBuffer copy = pool.allocatePooled(Math.max(n, 1));
        copy.memory().put(copy.offset(), data, data.position(), n);
        copy.retain();
        return Operation.send(connection.send, type, copy, true, n, immediate);
    }

    Operation sendOperation(RegisteredBuffer data) {
        EngineBuffer b = local(data, "data");
        checkMessageSize(b.length());
        hold(b);
        return Operation.send(connection.send, OperationType.SEND, b, false, b.length(), 0);
    }

    /**
     * The streaming path (see {@link StreamingSend}): one subscriber and one staging ring for the whole
     * stream, a window of the send queue's depth, each message staged in its own length (the ring is one
     * pooled buffer: the send queue's depth of the peer's largest messages, or less when that would not fit).
     */
    Mono<Void> send(Publisher<ByteBuffer> messages) {
        Objects.requireNonNull(messages, "messages");
        return Mono.<Void>create(sink -> {
            refuseIfClosed();
            int max = connection.agreement().maxMessageSize();
            int window = Math.max(1, connection.sendDepth());
            StagingRing staging = StagingRing.allocate(pool, window, Math.max(1, Math.min(max, pool.maxAllocationSize())));
            StreamingSend stream = new StreamingSend(connection.send, connection.poller, sink, staging, window, max,
                    owner);
            sink.onCancel(stream::cancel);
            Flux.from(messages).subscribe(stream);
        }).transform(this::onCallbacks);
    }

    Mono<Void> oneSided(OperationType type, RegisteredBuffer local, RemoteRegion remote, int immediate) {
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
        return onCallbacks(OperationMono.oneSided(this, type, local, remote, immediate));
    }

    Operation oneSidedOperation(OperationType type, RegisteredBuffer local, RemoteRegion remote, int immediate) {
        EngineBuffer b = local(local, "local");
        if (b.length() > remote.length()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.OUTSIDE_REGION,
                    type + " of " + b.length() + " bytes does not fit the " + remote.length() + "-byte " + remote);
        }
        hold(b);
        return Operation.oneSided(connection.send, type, b, remote, immediate);
    }

    Mono<Long> atomic(OperationType type, RemoteRegion remote, long compareAdd, long swap) {
        Objects.requireNonNull(remote, "remote");
        return onCallbacks(OperationMono.atomic(this, type, remote, compareAdd, swap));
    }

    /** Subscriber's thread: checks the remote word, then takes an engine-owned result word (held). */
    Operation atomicOperation(OperationType type, RemoteRegion remote, long compareAdd, long swap) {
        if (remote.length() != 8) {
            throw new InvalidRequestException(InvalidRequestException.Reason.WRONG_ATOMIC_SIZE,
                    type + " needs an 8-byte remote region, got " + remote.length() + " bytes (" + remote + ")");
        }
        if ((remote.address() & 7) != 0) {
            throw new InvalidRequestException(InvalidRequestException.Reason.MISALIGNED_ATOMIC,
                    type + " needs an 8-byte aligned remote address, got 0x" + Long.toHexString(remote.address()));
        }
        refuseIfClosed();
        EngineBuffer result = pool.allocatePooled(8);
        result.retain();
        return Operation.atomic(connection.send, type, result, remote, compareAdd, swap);
    }

    /**
     * Allocates a window (on the subscriber's thread: a system call) and hands its bind to the poller thread
     * like any operation; emits the region once bound.
     */
    Mono<ExposedRegion> expose(RegisteredBuffer buffer, RemoteAccess... access) {
        Objects.requireNonNull(buffer, "buffer");
        Objects.requireNonNull(access, "access");
        return onCallbacks(OperationMono.expose(this, buffer, access));
    }

    /** Subscriber's thread: checks, holds the buffer and allocates the window to bind. */
    Operation bindOperation(RegisteredBuffer buffer, RemoteAccess[] access) {
        EngineBuffer b = local(buffer, "buffer");
        Set<RemoteAccess> granted = access.length == 0 ? EnumSet.noneOf(RemoteAccess.class) : EnumSet.copyOf(Arrays.asList(access));
        if (granted.isEmpty()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "expose needs at least one kind of RemoteAccess");
        }
        if (!connection.device().memoryWindows) {
            throw new InvalidRequestException(InvalidRequestException.Reason.NOT_SUPPORTED, "the device "
                    + connection.device().context().name() + " has no type 2 memory windows to expose memory with");
        }
        refuseIfClosed();
        hold(b);
        MemoryWindow window;
        try {
            window = connection.device().pd.allocateWindow();
        } catch (RuntimeException e) {
            b.unretain();
            throw new RdmaException("ibv_alloc_mw failed on " + connection.description() + ": " + e.getMessage(), e);
        }
        ExposedWindow w = new ExposedWindow(connection, b, window, accessFlags(granted), Collections.unmodifiableSet(granted));
        return Operation.bind(connection.send, w);
    }

    private static int accessFlags(Set<RemoteAccess> access) {
        int flags = 0;
        for (RemoteAccess a : access) {
            flags |= switch (a) {
                case READ -> AccessFlags.REMOTE_READ;
                case WRITE -> AccessFlags.REMOTE_WRITE;
                case ATOMIC -> AccessFlags.REMOTE_ATOMIC;
            };
        }
        return flags;
    }

    /**
     * The received messages: subscription, requests and cancellation are handed to the poller thread, which
     * posts receives for the demand only and delivers (there, or on the callback scheduler's worker).
     */
    Flux<RdmaMessage> receive(ReceiveQueue queue) {
        return this.<RdmaMessage>receive(queue, null)
                // Messages dropped after a cancel (a delivery already handed to the callback worker) give
                // their buffers back. Operators after this one discard into the subscriber's own hooks: the
                // docs ask users to release there too; a second release of a message does nothing.
                .doOnDiscard(EngineMessage.class, EngineMessage::release);
    }

    /** {@code receive(decoder)}: each message is lent to {@code decoder} on the poller thread. */
    <T> Flux<T> receive(ReceiveQueue queue, Function<? super RdmaMessage, ? extends T> decoder) {
        CompletionPoller poller = connection.poller;
        return Flux.<Object>create(sink -> {
            poller.run(() -> queue.subscribe(sink, decoder, callbacks));
            Object holder = owner;
            sink.onRequest(n -> poller.run(() -> queue.request(sink, n)));
            sink.onCancel(() -> {
                poller.run(() -> queue.cancel(sink));
                // The subscription (held by the receive queue while it lasts) keeps the owner reachable.
                Reference.reachabilityFence(holder);
            });
        }, FluxSink.OverflowStrategy.ERROR).map(OperationFactory::<T>cast);
    }

    @SuppressWarnings("unchecked")
    private static <T> T cast(Object o) {
        return (T) o;
    }

    /** Hands the operation to the poller thread (its own task: nothing else is allocated). */
    void submit(Operation op) {
        op.owner(owner);
        connection.poller.run(op);
    }

    /**
     * A closed connection refuses before the copy: its device's pool may be closed too (a retired device),
     * and the caller should hear that the connection is closed, not that a pool is.
     */
    private void refuseIfClosed() {
        if (connection.isDisposed()) {
            throw connection.closing.closedError("refused");
        }
    }

    private <T> Mono<T> onCallbacks(Mono<T> m) {
        return callbacks == null ? m : m.publishOn(callbacks);
    }

    private void checkMessageSize(int n) {
        int max = connection.agreement().maxMessageSize();
        if (n > max) {
            throw new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                    "a " + n + "-byte message does not fit the receiver's " + max + "-byte receive buffers ("
                            + (connection.agreement().peerReceiveBufferSize() > 0 ? "as the peer announced"
                            : "this side's RECEIVE_BUFFER_SIZE; the peer did not announce its own") + ")");
        }
    }

    private EngineBuffer local(RegisteredBuffer buffer, String what) {
        if (!(buffer instanceof EngineBuffer b)) {
            throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER,
                    what + " was not made by this engine's RdmaMemory: " + buffer.getClass().getName());
        }
        if (b.pool() != pool) {
            throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER,
                    what + " is registered on another device (" + b.pool() + ") than this connection's (" + pool + ")");
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
}
