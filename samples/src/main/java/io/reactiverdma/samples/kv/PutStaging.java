package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The registered buffers a client's large PUTs are staged in for the server's RDMA READ: a fixed number,
 * registered once (on the first large PUT) and reused, so memory pinned for PUTs is bounded and no request
 * registers or deregisters memory. Registering pins pages and programs the device, a slow system call: it
 * runs on the bounded elastic scheduler, never on the caller's thread (a Netty event loop in the gateway) or
 * on the engine's poller; so does deregistering, when the client closes.
 */
final class PutStaging {
    private final RdmaMemory memory;
    private final int buffers;
    private final int bufferBytes;
    private final ConcurrentLinkedQueue<RegisteredBuffer> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger inUse = new AtomicInteger();
    /** Completes once the buffers are registered (started by the first {@link #take}, not cancelled by it). */
    private final Sinks.Empty<Void> registered = Sinks.empty();
    private final AtomicBoolean registering = new AtomicBoolean();
    private volatile boolean closed;

    /**
     * @param buffers     how many large PUTs may be in flight at once (at least 1)
     * @param bufferBytes each buffer's size: the largest value
     */
    PutStaging(RdmaMemory memory, int buffers, int bufferBytes) {
        if (buffers < 1) {
            throw new IllegalArgumentException("buffers must be at least 1, got " + buffers);
        }
        this.memory = memory;
        this.buffers = buffers;
        this.bufferBytes = bufferBytes;
    }

    /**
     * A free buffer, the caller's until {@link #giveBack}. Fails with {@link KvException}
     * ({@link KvException.Reason#BUSY}) when every buffer is in use: the caller may retry later; waiting here
     * would only move the unbounded queue elsewhere.
     */
    Mono<RegisteredBuffer> take() {
        if (registering.compareAndSet(false, true)) {
            Schedulers.boundedElastic().schedule(() -> {
                try {
                    register();
                    registered.tryEmitEmpty();
                } catch (RuntimeException e) {
                    registered.tryEmitError(e);
                }
            });
        }
        return registered.asMono().then(Mono.fromCallable(() -> {
            RegisteredBuffer b = closed ? null : free.poll();
            if (b == null) {
                throw new KvException(KvException.Reason.BUSY, "all " + buffers + " staging buffers for large PUTs"
                        + " are in use (" + inUse.get() + " PUTs waiting for the server); nothing was sent");
            }
            inUse.incrementAndGet();
            return b;
        }));
    }

    /** Returns {@code b} once the server no longer reads it (it answered, or the connection is gone). */
    void giveBack(RegisteredBuffer b) {
        inUse.decrementAndGet();
        free.add(b);
        if (closed) {
            releaseFree();
        }
    }

    /**
     * Copies {@code value} into {@code target}, a buffer taken from {@link #take}: up to the server's largest
     * value (4 MiB by default), on the caller's thread.
     */
    static void stage(RegisteredBuffer target, byte[] value) {
        target.buffer().put(0, value);
    }

    /** Large PUTs holding a buffer now. */
    int inUse() {
        return inUse.get();
    }

    /** The connection closed: what is free is deregistered now, the rest when it is given back. */
    void close() {
        closed = true;
        releaseFree();
    }

    private void register() {
        for (int i = 0; i < buffers && !closed; i++) {
            free.add(registerOne(memory, bufferBytes));
        }
        if (closed) {
            releaseFree();
        }
    }

    private void releaseFree() {
        List<RegisteredBuffer> gone = new ArrayList<>();
        for (RegisteredBuffer b; (b = free.poll()) != null; ) {
            gone.add(b);
        }
        if (!gone.isEmpty()) {
            Schedulers.boundedElastic().schedule(() -> deregister(gone));
        }
    }

    /** One staging buffer, registered for the server's READ (a slow system call: pins pages). */
    private static RegisteredBuffer registerOne(RdmaMemory memory, int bytes) {
        return memory.allocateRegistered(bytes, RemoteAccess.READ);
    }

    /** Releases {@code buffers}, deregistering them (a slow system call, as registering). */
    private static void deregister(List<RegisteredBuffer> buffers) {
        buffers.forEach(RegisteredBuffer::release);
    }
}
