package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaResources;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.samples.echo.EchoServer;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The key-value server. It keeps the table in registered memory that clients READ directly (GET never
 * reaches this server's CPU), serves PUT, DELETE and counter lookups as two-sided requests, and lets
 * clients change counter words with remote atomics.
 *
 * <p>Memory: the table (slots and value area, {@code REMOTE_READ} only) and the counter words
 * ({@code REMOTE_ATOMIC} only) are registered once, at start, in the memory of the device the server listens
 * on ({@link RdmaResources#memory(String)}, before any connection exists). That memory is the device's (one
 * protection domain for every connection on the device), so every connection uses the same registrations. A
 * connection on another device (a server bound to several) is refused with a typed error in its log, since
 * the table's keys are not valid there.
 *
 * <p>Each connection gets the {@link KvLayout} handshake first, then one response per request, in request
 * order. Large PUTs arrive as PUT_REMOTE: the server RDMA READs the value straight from the client's
 * registered buffer into a fresh block of the value area (no copy, one round trip whatever the size), then
 * publishes the slot.
 */
public final class KvServer implements Disposable {
    private final KvServerOptions options;
    private final Consumer<String> log;
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong puts = new AtomicLong();
    private final AtomicLong remotePuts = new AtomicLong();
    private final AtomicLong deletes = new AtomicLong();
    private final AtomicLong counterLookups = new AtomicLong();
    private final AtomicLong failedRequests = new AtomicLong();
    private final AtomicLong abandonedBlocks = new AtomicLong();
    private final AtomicLong connections = new AtomicLong();
    private volatile DisposableRdmaServer server;
    // Registered at start, before the server listens.
    private final RdmaMemory memory;
    private final RegisteredBuffer tableMemory;
    private final RegisteredBuffer counterMemory;
    private final KvTable table;
    private boolean released;

    private KvServer(KvServerOptions options, Consumer<String> log, RdmaMemory memory) {
        this.options = options;
        this.log = log;
        this.memory = memory;
        RegisteredBuffer slots = memory.allocateRegistered(Math.toIntExact(options.tableBytes()), RemoteAccess.READ);
        RegisteredBuffer words;
        try {
            words = memory.allocateRegistered(Math.max(8, 8 * options.counterCount()), RemoteAccess.ATOMIC);
        } catch (RuntimeException e) {
            slots.release();
            throw e;
        }
        KvLayout layout = new KvLayout(options.slotCount(), options.slotSize(), options.keyMaxBytes(),
                options.maxProbe(), options.maxValueBytes(), options.valueAreaBytes(), options.counterCount(),
                slots.remoteRegion(), words.remoteRegion());
        this.tableMemory = slots;
        this.counterMemory = words;
        this.table = new KvTable(layout, slots.buffer(), words.buffer(), options.blockReuseDelay().toNanos(),
                System::nanoTime);
        log.accept("table registered: " + options.slotCount() + " slots of " + options.slotSize() + " B, "
                + options.valueAreaBytes() + " B of values (REMOTE_READ), " + options.counterCount()
                + " counters (REMOTE_ATOMIC)");
    }

    /**
     * Binds a server. Emits it once it listens; fails with the API's {@code RdmaException} when the address
     * cannot be bound (no RDMA device there, port in use). Cancelling abandons the bind (a server that was
     * bound meanwhile is disposed by the API).
     *
     * @param log receives one line per connection opened, closed or refused (may be {@code s -> {}})
     */
    public static Mono<KvServer> bind(KvServerOptions options, Consumer<String> log) {
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(log, "log");
        return RdmaResources.memory(options.host()).flatMap(memory -> {
            KvServer kv = new KvServer(options, log, memory);
            return options.limits().applyTo(RdmaServer.create()
                            .host(options.host())
                            .port(options.port())
                            .option(RdmaOption.RECEIVE_BUFFER_SIZE, options.maxMessageBytes())
                            .option(RdmaOption.RECEIVE_QUEUE_DEPTH, EchoServer.receiveQueueDepth(options.maxMessageBytes())))
                    .handle(kv::handle)
                    .bind()
                    .map(s -> {
                        kv.server = s;
                        s.onDispose().subscribe(null, null, kv::releaseMemory);
                        return kv;
                    })
                    .doOnError(e -> kv.releaseMemory())
                    .doOnCancel(kv::releaseMemory);
        });
    }

    /** {@link #bind} and wait at most {@code timeout}. */
    public static KvServer bindNow(KvServerOptions options, Duration timeout, Consumer<String> log) {
        Objects.requireNonNull(timeout, "timeout");
        return bind(options, log).block(timeout);
    }

    /** The address it listens on, with the real port. */
    public InetSocketAddress address() {
        return server.address();
    }

    /** What the server did so far. */
    public Metrics metrics() {
        KvTable t = table;
        return new Metrics(requests.get(), puts.get(), remotePuts.get(), deletes.get(), counterLookups.get(),
                failedRequests.get(), connections.get(), server == null ? 0 : server.connectionCount(),
                t.liveEntries(), t.valueBytesInUse(), abandonedBlocks.get());
    }

    /**
     * A snapshot of the server's counts.
     *
     * @param requestsHandled    two-sided requests received (all kinds; a GET is never one)
     * @param puts               PUTs that stored a value (inline or read from the client)
     * @param remotePuts         of those, the ones whose value the server RDMA READ from the client
     * @param deletes            DELETE requests
     * @param counterLookups     counter lookups (a client's first increment of a counter; the increments
     *                           themselves are remote atomics)
     * @param failedRequests     requests answered with an error status
     * @param connectionsOpened  connections accepted so far
     * @param connectionsOpen    connections open now
     * @param liveEntries        keys with a value
     * @param valueBytesInUse    value-area bytes taken by live values' blocks
     * @param abandonedBlocks    value blocks whose server-side READ was cancelled by a closing connection:
     *                           each was held back until that connection's QP was destroyed (the device
     *                           might still write it), then freed
     */
    public record Metrics(long requestsHandled, long puts, long remotePuts, long deletes, long counterLookups,
                          long failedRequests, long connectionsOpened, int connectionsOpen, int liveEntries,
                          long valueBytesInUse, long abandonedBlocks) {
    }

    /** The named counter's current value as the server reads it, or null when no client created it. */
    public Long counterValue(String name) {
        Objects.requireNonNull(name, "name");
        return table.counterValue(name);
    }

    /** Completes once the server stopped listening, every connection closed and the table was deregistered. */
    public Mono<Void> onDispose() {
        return server.onDispose().then(Mono.fromRunnable(this::releaseMemory));
    }

    /** Stops listening and closes every connection; the table is deregistered after them. Idempotent. */
    @Override
    public void dispose() {
        server.dispose();
    }

    @Override
    public boolean isDisposed() {
        return server.isDisposed();
    }

    /** Disposes and waits at most {@code timeout} for {@link #onDispose()}. */
    public void disposeNow(Duration timeout) {
        dispose();
        onDispose().block(timeout);
    }

    // -------------------------------------------------------------------------------------- internals

    /** Called on the rdma_cm thread before the connection is accepted. */
    private Publisher<Void> handle(RdmaConnection conn) {
        InetSocketAddress peer = conn.remoteAddress();
        KvTable t;
        try {
            t = tableFor(conn.memory());
        } catch (RuntimeException e) {
            log.accept("connection from " + peer + " refused: " + e);
            return Mono.error(e);
        }
        connections.incrementAndGet();
        log.accept("connection from " + peer);
        AtomicLong mine = new AtomicLong();
        Flux<ByteBuffer> responses = conn.receive()
                .map(EchoServer::copyAndRelease)
                .concatMap(request -> {
                    mine.incrementAndGet();
                    return handle(conn, t, request);
                })
                .doOnDiscard(RdmaMessage.class, RdmaMessage::release);
        return conn.send(Flux.concat(Mono.fromSupplier(() -> t.layout().encode()), responses))
                // The client may close while a response is on its way: that response is flushed. Not an error.
                .onErrorResume(ConnectionClosedException.class, e -> Mono.empty())
                .doOnError(e -> log.accept("connection from " + peer + " failed: " + e))
                .doOnSuccess(v -> log.accept("connection from " + peer + " closed after " + mine.get()
                        + (mine.get() == 1 ? " request" : " requests")));
    }

    private KvTable tableFor(RdmaMemory connectionMemory) {
        if (connectionMemory != memory) {
            throw new KvException(KvException.Reason.SERVER_ERROR, "the connection is on another RDMA device than "
                    + "the one whose memory holds the table");
        }
        return table;
    }

    private synchronized void releaseMemory() {
        if (!released) {
            released = true;
            tableMemory.release();
            counterMemory.release();
        }
    }

    /** One request: emits its response (never errors: a failure is a response with an error status). */
    private Mono<ByteBuffer> handle(RdmaConnection conn, KvTable t, ByteBuffer message) {
        requests.incrementAndGet();
        KvProtocol.Request r;
        try {
            r = KvProtocol.decodeRequest(message);
        } catch (KvException e) {
            return Mono.just(failure(KvProtocol.requestIdOf(message), e));
        }
        try {
            return switch (r.op()) {
                case PUT_INLINE -> {
                    t.put(r.key(), r.value());
                    puts.incrementAndGet();
                    yield Mono.just(ok(r.id(), 0));
                }
                case DELETE -> {
                    deletes.incrementAndGet();
                    yield Mono.just(ok(r.id(), t.delete(r.key()) ? 1 : 0));
                }
                case COUNTER -> {
                    counterLookups.incrementAndGet();
                    yield Mono.just(ok(r.id(), t.counter(r.key())));
                }
                case PUT_REMOTE -> readAndPublish(conn, t, r);
            };
        } catch (KvException e) {
            return Mono.just(failure(r.id(), e));
        }
    }

    /** PUT_REMOTE: READ the value from the client into a fresh block, then publish it. */
    private Mono<ByteBuffer> readAndPublish(RdmaConnection conn, KvTable t, KvProtocol.Request r) {
        if (r.valueLength() <= t.layout().inlineMaxBytes()) {
            throw new KvException(KvException.Reason.PROTOCOL, "a " + r.valueLength() + "-byte value fits in a "
                    + "slot: send it in the message");
        }
        long block = t.reserve(r.key(), r.valueLength());
        RegisteredBuffer target = tableMemory.slice(t.tableOffset(block), r.valueLength());
        return BlockRead.readThenPublish(t, r.key(), r.valueLength(), block, conn.read(target, r.source()),
                        conn.onDispose(), abandonedBlocks)
                .then(Mono.fromCallable(() -> {
                    puts.incrementAndGet();
                    remotePuts.incrementAndGet();
                    return ok(r.id(), 0);
                }))
                .onErrorResume(e -> Mono.just(failure(r.id(), e instanceof KvException k ? k
                        : new KvException(KvException.Reason.SERVER_ERROR,
                                "reading the value from the client failed: " + e))));
    }

    private static ByteBuffer ok(int id, long result) {
        return KvProtocol.encode(new KvProtocol.Response(id, KvProtocol.Status.OK, result, ""));
    }

    private ByteBuffer failure(int id, KvException e) {
        failedRequests.incrementAndGet();
        return KvProtocol.encode(new KvProtocol.Response(id, KvProtocol.Status.of(e.reason()), 0, e.getMessage()));
    }
}
