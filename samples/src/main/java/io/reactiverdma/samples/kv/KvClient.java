package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.retry.Retry;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * A client of a {@link KvServer}, over one RDMA connection.
 * <ul>
 *   <li>{@link #get}: one-sided. It RDMA READs the slots of the key's probe window (4 slots per READ) and,
 *       for a value stored out of line, the value's block, then re-reads the block's generation word: the
 *       server's CPU is not involved. A slot that fails its checks (odd version: being written; checksum
 *       mismatch: the read mixed two writes) or a block rewritten while it was read is read again, a
 *       bounded number of times.</li>
 *   <li>{@link #put}, {@link #delete}: two-sided requests. A PUT whose key and value fit the server's
 *       message size carries the value; a larger one copies the value into one of a few buffers registered
 *       for remote READ only (registered once, off the caller's thread, and reused: memory pinned for PUTs
 *       is bounded) and lets the server READ it into fresh space (one round trip, no chunking protocol, the
 *       server's CPU copies nothing); the buffer is free again when the response arrives. When every buffer
 *       is in use, a large PUT fails at once with {@link KvException.Reason#BUSY}.</li>
 *   <li>{@link #increment}: one remote fetch-and-add on the counter's word, after a one-time two-sided lookup
 *       of its address (cached).</li>
 * </ul>
 * Operations are lazy (nothing happens before subscription), may run concurrently, and signal on the
 * engine's threads (or the {@link RdmaClient#callbackScheduler callback scheduler} of the client it was
 * connected with): do not block in them. Every operation fails with the API's
 * {@link ConnectionClosedException} when the connection closes before it is done.
 */
public final class KvClient implements Disposable {
    /** Slots read per READ while probing: 4 slots of 256 B are one 1 KiB READ. */
    static final int PROBE_WINDOW_SLOTS = 4;
    /** How often {@link #get} reads an entry that keeps changing before it gives up. */
    static final int GET_ATTEMPTS = 64;
    /** {@link #get} reads out-of-line values in chunks of at most this size. */
    static final int GET_CHUNK_BYTES = 1 << 20;
    /** Chunk READs (each followed by its re-check) in flight per {@link #download}. */
    static final int DOWNLOAD_READS_IN_FLIGHT = 4;
    /** Large PUTs in flight at once, unless {@link #connect(RdmaClient, int)} says otherwise. */
    public static final int DEFAULT_LARGE_PUT_BUFFERS = 4;
    /**
     * Counter words cached at most (the server's own limit is its counter count): a client that increments
     * ever new names (an HTTP caller of the gateway) cannot grow this client's memory without bound.
     */
    static final int MAX_CACHED_COUNTERS = 4096;

    private final RdmaConnection conn;
    private final boolean verifyReads;
    private final int largePutBuffers;
    private volatile PutStaging staging;
    private final Sinks.One<KvLayout> handshake = Sinks.one();
    private final Map<Integer, Pending> pending = new ConcurrentHashMap<>();
    private final Map<String, Mono<RemoteRegion>> counterWords = new ConcurrentHashMap<>();
    private final AtomicInteger requestIds = new AtomicInteger();
    private final AtomicLong tornSlotReads = new AtomicLong();
    private final AtomicLong changedValueReads = new AtomicLong();
    private final Disposable receiving;
    private volatile KvLayout layout;
    private volatile Throwable closedBy;

    KvClient(RdmaConnection conn, boolean verifyReads) {
        this(conn, verifyReads, DEFAULT_LARGE_PUT_BUFFERS);
    }

    KvClient(RdmaConnection conn, boolean verifyReads, int largePutBuffers) {
        if (largePutBuffers < 1) {
            throw new IllegalArgumentException("largePutBuffers must be at least 1, got " + largePutBuffers);
        }
        this.conn = conn;
        this.verifyReads = verifyReads;
        this.largePutBuffers = largePutBuffers;
        this.receiving = conn.receive()
                .doOnDiscard(RdmaMessage.class, RdmaMessage::release)
                .subscribe(this::onMessage, this::onClosed, () -> onClosed(null));
    }

    /**
     * Connects with {@code client} (configured with the server's host and port, and any options) and waits
     * for the server's handshake, which carries the table's layout and remote regions. Emits the client
     * once it can serve requests. Fails with the API's {@code RdmaConnectException} when connecting fails,
     * with {@link KvException} ({@link KvException.Reason#PROTOCOL}) when the peer's first message is not
     * the handshake or none comes within the client's {@link RdmaOption#CONNECT_TIMEOUT}, and with
     * {@link ConnectionClosedException} when the server closes first. Cancelling abandons the attempt and
     * closes a connection made meanwhile.
     */
    public static Mono<KvClient> connect(RdmaClient client) {
        return connect(client, true, DEFAULT_LARGE_PUT_BUFFERS);
    }

    /**
     * As {@link #connect(RdmaClient)}, with {@code largePutBuffers} large PUTs in flight at most (each takes a
     * registered buffer of the server's largest value size, 4 MiB by default, from the first large PUT on).
     *
     * @throws IllegalArgumentException when {@code largePutBuffers} is below 1
     */
    public static Mono<KvClient> connect(RdmaClient client, int largePutBuffers) {
        if (largePutBuffers < 1) {
            throw new IllegalArgumentException("largePutBuffers must be at least 1, got " + largePutBuffers);
        }
        return connect(client, true, largePutBuffers);
    }

    /**
     * As {@link #connect(RdmaClient)}; with {@code verifyReads} false the client takes every slot and value
     * it READs as it comes (no seqlock, checksum or version re-check): only to show what the checks prevent.
     */
    static Mono<KvClient> connect(RdmaClient client, boolean verifyReads) {
        return connect(client, verifyReads, DEFAULT_LARGE_PUT_BUFFERS);
    }

    private static Mono<KvClient> connect(RdmaClient client, boolean verifyReads, int largePutBuffers) {
        Objects.requireNonNull(client, "client");
        Duration handshakeTimeout = client.configuration().option(RdmaOption.CONNECT_TIMEOUT);
        return client.connect().flatMap(conn -> {
            KvClient kv = new KvClient(conn, verifyReads, largePutBuffers);
            return kv.handshake.asMono()
                    .timeout(handshakeTimeout, Mono.error(() -> new KvException(KvException.Reason.PROTOCOL,
                            "no handshake from " + conn.remoteAddress() + " within " + handshakeTimeout.toMillis()
                                    + " ms (not a key-value server?)")))
                    .thenReturn(kv)
                    .doOnError(e -> kv.dispose())
                    .doOnCancel(kv::dispose);
        });
    }

    /** The server's table layout, from the handshake. */
    public KvLayout layout() {
        return layout;
    }

    /**
     * The value of {@code key}, read with one-sided RDMA READs. Emits the value and completes, or completes
     * empty when the key has no value. The value is never torn: it is exactly what one PUT stored (see the
     * class comment). Fails with {@link KvException}: {@link KvException.Reason#KEY_TOO_LONG} for an empty
     * or too long key (nothing is read), {@link KvException.Reason#CONCURRENT_MODIFICATION} when the entry
     * changed during each of {@value #GET_ATTEMPTS} attempts. Cancelling stops the signal; READs already
     * posted finish on their own (their buffers are held until then).
     *
     * @throws NullPointerException when {@code key} is null
     */
    public Mono<byte[]> get(String key) {
        Objects.requireNonNull(key, "key");
        return Mono.defer(() -> {
            byte[] k = keyBytes(key);
            return find(k).flatMap(found -> found.slot.inlineValue() != null
                            ? Mono.just(found.slot.inlineValue())
                            : readValue(found, Math.min(GET_CHUNK_BYTES, found.slot.valueLength()), false)
                                    .collect(ByteArrayOutputStream::new, KvClient::append)
                                    .map(ByteArrayOutputStream::toByteArray))
                    .retryWhen(retryChanged("get of '" + key + "'"));
        });
    }

    /**
     * Stores {@code value} under {@code key}, replacing any value. Completes when the server confirmed it
     * (a GET that starts afterwards sees it). Fails with {@link KvException}, before anything is sent, for
     * {@link KvException.Reason#KEY_TOO_LONG} and {@link KvException.Reason#VALUE_TOO_LARGE} (larger than
     * the layout's {@code maxValueBytes}); with {@link KvException.Reason#TABLE_FULL} or
     * {@link KvException.Reason#VALUE_AREA_FULL} when the server has no room; with
     * {@link KvException.Reason#BUSY}, before anything is sent, when the value needs a staging buffer and
     * all are in use. Cancelling stops the signal, not the request: the server may still store the value (a
     * large value's staging buffer is kept until the server answered, as the server may be reading it).
     *
     * @throws NullPointerException when {@code key} or {@code value} is null
     */
    public Mono<Void> put(String key, byte[] value) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        return Mono.defer(() -> {
            byte[] k = keyBytes(key);
            KvLayout l = layout;
            if (value.length > l.maxValueBytes()) {
                return Mono.error(new KvException(KvException.Reason.VALUE_TOO_LARGE, "a " + value.length
                        + "-byte value for '" + key + "' exceeds the server's largest value, " + l.maxValueBytes()
                        + " bytes"));
            }
            if (KvProtocol.putInlineBytes(k.length, value.length) <= conn.maxMessageSize()) {
                byte[] copy = value.clone(); // the request is encoded when the send is subscribed
                return call(id -> KvProtocol.Request.putInline(id, k, copy), null).then();
            }
            PutStaging buffers = staging;
            return buffers.take().flatMap(source -> {
                PutStaging.stage(source, value);
                return call(id -> KvProtocol.Request.putRemote(id, k, value.length,
                        source.remoteRegion().slice(0, value.length)), () -> buffers.giveBack(source));
            }).then();
        });
    }

    /**
     * Removes {@code key}'s value. Emits true when there was one, false when there was none, then
     * completes. Fails with {@link KvException} ({@link KvException.Reason#KEY_TOO_LONG}) before anything is
     * sent. Cancelling stops the signal, not the request.
     *
     * @throws NullPointerException when {@code key} is null
     */
    public Mono<Boolean> delete(String key) {
        Objects.requireNonNull(key, "key");
        return Mono.defer(() -> {
            byte[] k = keyBytes(key);
            return call(id -> KvProtocol.Request.delete(id, k), null).map(r -> r.result() == 1);
        });
    }

    /**
     * Adds {@code delta} to the named counter (created at 0 on first use) with one remote fetch-and-add,
     * atomic with respect to every other client's. Emits the counter's value before the addition, then
     * completes. The first increment of a counter on this client first asks the server for the counter's
     * word (two-sided, once: later ones reuse it). Fails with {@link KvException}:
     * {@link KvException.Reason#KEY_TOO_LONG} for a bad name (nothing sent),
     * {@link KvException.Reason#COUNTERS_FULL} when the server has no word left. Cancelling stops the
     * signal; an atomic already posted still happens.
     *
     * @throws NullPointerException when {@code counter} is null
     */
    public Mono<Long> increment(String counter, long delta) {
        Objects.requireNonNull(counter, "counter");
        return Mono.defer(() -> counterWord(counter).flatMap(word -> conn.fetchAndAdd(word, delta)));
    }

    /**
     * The value of {@code key} as a stream of chunks of {@code chunkSizeBytes} (the last one shorter), read
     * with RDMA READs as the subscriber's demand asks, at most {@value #DOWNLOAD_READS_IN_FLIGHT} chunks
     * ahead of it. Each chunk is emitted only after a re-read of the slot's version showed the value
     * unchanged since the download began, so every emitted byte belongs to the same value. Each
     * {@code ByteBuffer} is a new heap buffer, the subscriber's to keep. Completes after the last chunk.
     * Fails with {@link KvException}: {@link KvException.Reason#NOT_FOUND} when the key has no value,
     * {@link KvException.Reason#CONCURRENT_MODIFICATION} when the value is replaced or deleted before the
     * last chunk was read (chunks emitted before stay valid: they are a prefix of the old value),
     * {@link KvException.Reason#KEY_TOO_LONG} or {@link KvException.Reason#ILLEGAL_ARGUMENT} (a chunk size
     * outside 1 .. the pool's largest buffer, 4 MiB) before anything is read. Cancelling stops further
     * READs; those in flight finish on their own.
     *
     * @throws NullPointerException when {@code key} is null
     */
    public Flux<ByteBuffer> download(String key, int chunkSizeBytes) {
        Objects.requireNonNull(key, "key");
        return Flux.defer(() -> {
            byte[] k = keyBytes(key);
            int max = conn.memory().maxAllocationSize();
            if (chunkSizeBytes < 1 || chunkSizeBytes > max) {
                return Flux.error(new KvException(KvException.Reason.ILLEGAL_ARGUMENT, "chunk size must be 1.."
                        + max + " bytes, got " + chunkSizeBytes));
            }
            return find(k)
                    .retryWhen(retryChanged("download of '" + key + "'"))
                    .switchIfEmpty(Mono.error(() -> new KvException(KvException.Reason.NOT_FOUND, "'" + key
                            + "' has no value")))
                    .flatMapMany(found -> found.slot.inlineValue() != null
                            ? Flux.fromIterable(chunks(found.slot.inlineValue(), chunkSizeBytes))
                            : readValue(found, chunkSizeBytes, true))
                    .onErrorMap(KvClient::changed, e -> new KvException(KvException.Reason.CONCURRENT_MODIFICATION,
                            "the value of '" + key + "' changed during the download"));
        });
    }

    /** Requests sent (or being sent) whose response has not arrived yet. */
    int pendingRequests() {
        return pending.size();
    }

    /** Large PUTs holding a staging buffer now. */
    int largePutsInFlight() {
        PutStaging s = staging;
        return s == null ? 0 : s.inUse();
    }

    /** Counter words cached now. */
    int cachedCounterWords() {
        return counterWords.size();
    }

    /** False once the connection closed or is closing: a new one is needed (unlike {@link #onDispose()}, this is
     * known as soon as receiving ends, before the engine finished its close sequence). */
    public boolean isOpen() {
        return closedBy == null && !conn.isDisposed();
    }

    /** Slot reads this client rejected as torn (odd version or checksum mismatch) and read again. */
    public long tornSlotReads() {
        return tornSlotReads.get();
    }

    /** Value reads whose slot version had changed by the re-check (read again by get, failed by download). */
    public long changedValueReads() {
        return changedValueReads.get();
    }

    /** Completes once the connection is closed and everything it held is released. */
    public Mono<Void> onDispose() {
        return conn.onDispose();
    }

    /** Closes the connection; outstanding operations fail with {@link ConnectionClosedException}. Idempotent. */
    @Override
    public void dispose() {
        conn.dispose();
    }

    @Override
    public boolean isDisposed() {
        return conn.isDisposed();
    }

    // ---------------------------------------------------------------------------------- one-sided reads

    /** A live slot holding the key. */
    private record Found(int index, SlotCodec.Slot slot) {
    }

    /** Thrown inside a read when what it read was torn or changed: the read starts over. */
    static final class ValueChanged extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ValueChanged() {
            super("changed while read", null, false, false);
        }
    }

    /**
     * True for {@link ValueChanged}, and for Reactor's composite of several: chunk READs run concurrently, and
     * two that fail at once reach the subscriber as one {@code CompositeException}.
     */
    static boolean changed(Throwable e) {
        java.util.List<Throwable> all = reactor.core.Exceptions.unwrapMultiple(e);
        return !all.isEmpty() && all.stream().allMatch(ValueChanged.class::isInstance);
    }

    private Retry retryChanged(String what) {
        return Retry.max(GET_ATTEMPTS - 1)
                .filter(KvClient::changed)
                .onRetryExhaustedThrow((spec, signal) -> new KvException(KvException.Reason.CONCURRENT_MODIFICATION,
                        what + " found the entry changing on each of " + GET_ATTEMPTS + " attempts"));
    }

    /** The key's live slot, empty when absent; errors with {@link ValueChanged} on a torn slot. */
    private Mono<Found> find(byte[] key) {
        KvLayout l = layout;
        return probe(l, key, l.homeSlot(key), 0);
    }

    private Mono<Found> probe(KvLayout l, byte[] key, int first, int probed) {
        int n = Math.min(PROBE_WINDOW_SLOTS, Math.min(l.maxProbe() - probed, l.slotCount() - first));
        return readSlots(l, first, n).flatMap(slots -> {
            for (int i = 0; i < n; i++) {
                SlotCodec.Slot s = slots[i];
                if (s.check() == SlotCodec.Check.TORN) {
                    tornSlotReads.incrementAndGet();
                    return Mono.error(new ValueChanged());
                }
                if (s.holds(key)) {
                    return Mono.just(new Found(first + i, s));
                }
                if (s.state() == SlotCodec.EMPTY) {
                    return Mono.empty(); // the server never places a key past an empty slot
                }
            }
            if (probed + n >= l.maxProbe()) {
                return Mono.empty();
            }
            return probe(l, key, (first + n) % l.slotCount(), probed + n);
        });
    }

    private Mono<SlotCodec.Slot[]> readSlots(KvLayout l, int first, int n) {
        return Mono.defer(() -> {
            RegisteredBuffer local = conn.memory().allocate(n * l.slotSize());
            return conn.read(local, l.slots(first, n))
                    .then(Mono.fromCallable(() -> {
                        ByteBuffer b = local.buffer();
                        SlotCodec.Slot[] slots = new SlotCodec.Slot[n];
                        for (int i = 0; i < n; i++) {
                            slots[i] = SlotCodec.decode(b, i * l.slotSize(), l.slotSize(), l.keyMaxBytes(),
                                    l.inlineMaxBytes(), verifyReads);
                        }
                        return slots;
                    }))
                    .doFinally(signal -> local.release()); // held by the READ until the device is done
        });
    }

    /**
     * An out-of-line value in chunks. Each chunk is emitted after a re-check: with {@code slotUnchanged},
     * that the slot's version is still the one that pointed us at the block (the value was not replaced:
     * what a download promises); else that the block's generation is still the one the slot gave (the block
     * was not rewritten: enough for a consistent value, and a GET then survives a replacement that happens
     * while it reads, the server frees the old block only after the slot moved on and reuses it later).
     */
    private Flux<ByteBuffer> readValue(Found found, int chunkBytes, boolean slotUnchanged) {
        int length = found.slot.valueLength();
        int chunks = (int) ((length + (long) chunkBytes - 1) / chunkBytes);
        return Flux.range(0, chunks)
                .flatMapSequential(i -> readChunk(found, (long) i * chunkBytes,
                        (int) Math.min(chunkBytes, length - (long) i * chunkBytes), slotUnchanged),
                        DOWNLOAD_READS_IN_FLIGHT, 1);
    }

    private Mono<ByteBuffer> readChunk(Found found, long offset, int length, boolean slotUnchanged) {
        return Mono.defer(() -> {
            KvLayout l = layout;
            RegisteredBuffer local = conn.memory().allocate(length);
            long valueStart = found.slot.valueOffset() + KvTable.BLOCK_HEADER_BYTES;
            return conn.read(local, l.value(valueStart + offset, length))
                    // Posted only once the chunk is in, so it reads a word the server changes before it writes
                    // the block again: unchanged means the chunk's bytes are the value's, whatever the order
                    // in which the device copied them.
                    .then(slotUnchanged
                            ? checkWord(l.slots(found.index, 1).slice(SlotCodec.VERSION, 8), found.slot.version())
                            : checkWord(l.value(found.slot.valueOffset(), 8), found.slot.blockGeneration()))
                    .then(Mono.fromCallable(() -> {
                        byte[] copy = new byte[length];
                        local.buffer().get(copy);
                        return ByteBuffer.wrap(copy);
                    }))
                    .doFinally(signal -> local.release());
        });
    }

    /** READs the 8-byte word at {@code remote}; fails with {@link ValueChanged} unless it is {@code expected}. */
    private Mono<Void> checkWord(RemoteRegion remote, long expected) {
        if (!verifyReads) {
            return Mono.empty();
        }
        return Mono.defer(() -> {
            RegisteredBuffer word = conn.memory().allocate(8);
            return conn.read(word, remote)
                    .then(Mono.defer(() -> {
                        if (word.buffer().getLong(0) != expected) {
                            changedValueReads.incrementAndGet();
                            return Mono.<Void>error(new ValueChanged());
                        }
                        return Mono.<Void>empty();
                    }))
                    .doFinally(signal -> word.release());
        });
    }

    private static java.util.List<ByteBuffer> chunks(byte[] value, int chunkBytes) {
        java.util.List<ByteBuffer> list = new java.util.ArrayList<>();
        for (int at = 0; at < value.length; at += chunkBytes) {
            list.add(ByteBuffer.wrap(java.util.Arrays.copyOfRange(value, at, Math.min(value.length, at + chunkBytes))));
        }
        return list;
    }

    private static void append(ByteArrayOutputStream out, ByteBuffer chunk) {
        out.write(chunk.array(), chunk.arrayOffset() + chunk.position(), chunk.remaining());
    }

    // ---------------------------------------------------------------------------------- two-sided calls

    /**
     * The counter's word: cached once known. A name is checked before anything is cached (an invalid one
     * costs nothing), a failed lookup leaves no entry, and at most {@value #MAX_CACHED_COUNTERS} words are
     * cached (beyond, each increment of an uncached name asks the server again).
     */
    private Mono<RemoteRegion> counterWord(String counter) {
        byte[] n = keyBytes(counter);
        Mono<RemoteRegion> known = counterWords.get(counter);
        if (known != null) {
            return known;
        }
        Mono<RemoteRegion> lookup = Mono.defer(() -> call(id -> KvProtocol.Request.counter(id, n), null))
                .map(r -> layout.counter(Math.toIntExact(r.result())));
        if (counterWords.size() >= MAX_CACHED_COUNTERS) {
            return lookup;
        }
        AtomicReference<Mono<RemoteRegion>> self = new AtomicReference<>();
        Mono<RemoteRegion> cached = lookup
                .doOnError(e -> counterWords.remove(counter, self.get()))
                // Cache the word for good, but not a failure: a later increment asks again.
                .cache(word -> Duration.ofMillis(Long.MAX_VALUE), e -> Duration.ZERO, () -> Duration.ZERO);
        self.set(cached);
        Mono<RemoteRegion> raced = counterWords.putIfAbsent(counter, cached);
        return raced != null ? raced : cached;
    }

    private byte[] keyBytes(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        KvLayout l = layout;
        if (k.length == 0 || k.length > l.keyMaxBytes()) {
            throw new KvException(KvException.Reason.KEY_TOO_LONG, "a key must have 1.." + l.keyMaxBytes()
                    + " UTF-8 bytes, '" + abbreviate(key) + "' has " + k.length);
        }
        return k;
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? s : s.substring(0, 37) + "...";
    }

    /** One request whose response has not arrived; {@code release} runs when it has (or never will). */
    private static final class Pending {
        final Sinks.One<KvProtocol.Response> response = Sinks.one();
        final Runnable source;

        Pending(Runnable release) {
            this.source = release;
        }

        void complete(KvProtocol.Response r) {
            release();
            KvException failure = r.failure();
            if (failure != null) {
                response.tryEmitError(failure);
            } else {
                response.tryEmitValue(r);
            }
        }

        void fail(Throwable e) {
            release();
            response.tryEmitError(e);
        }

        private void release() {
            if (source != null) {
                source.run();
            }
        }
    }

    /** Sends the request made with a fresh id; emits its OK response or fails with its error. */
    private Mono<KvProtocol.Response> call(IntFunction<KvProtocol.Request> request, Runnable source) {
        int id = requestIds.incrementAndGet();
        Pending p = new Pending(source);
        pending.put(id, p);
        Throwable closed = closedBy;
        if (closed != null && pending.remove(id) != null) {
            p.fail(closedException(closed));
            return p.response.asMono();
        }
        // The send is not the caller's to cancel: a request cancelled while still queued would never be
        // sent, so no response would ever remove its entry and release its registration (the gateway's
        // request timeout grew both without bound on its one connection). Once subscribed, it goes out; the
        // caller's cancel stops only the wait for the response, which then cleans up when it arrives.
        conn.send(KvProtocol.encode(request.apply(id))).subscribe(null, e -> {
            // Not sent: no response will come.
            if (pending.remove(id) != null) {
                p.fail(e);
            }
        });
        return p.response.asMono();
    }

    private void onMessage(RdmaMessage m) {
        ByteBuffer data;
        try {
            data = ByteBuffer.wrap(m.toByteArray());
        } finally {
            m.release();
        }
        if (layout == null) {
            try {
                KvLayout l = KvLayout.decode(data);
                staging = new PutStaging(conn.memory(), largePutBuffers, Math.max(1, l.maxValueBytes()));
                layout = l;
                handshake.tryEmitValue(l);
            } catch (KvException e) {
                handshake.tryEmitError(e);
                conn.dispose();
            }
            return;
        }
        KvProtocol.Response r;
        try {
            r = KvProtocol.decodeResponse(data);
        } catch (KvException e) {
            // A peer that breaks the protocol cannot be trusted with the rest: close, failing what is pending.
            onClosed(e);
            conn.dispose();
            return;
        }
        Pending p = pending.remove(r.id());
        if (p != null) {
            p.complete(r);
        }
    }

    /** The connection closed (error null) or receiving failed: fail the handshake and every pending request. */
    private void onClosed(Throwable error) {
        Throwable cause = error != null ? error : new ConnectionClosedException("the connection to "
                + conn.remoteAddress() + " closed");
        closedBy = cause;
        handshake.tryEmitError(closedException(cause));
        for (Integer id : pending.keySet()) {
            Pending p = pending.remove(id);
            if (p != null) {
                p.fail(closedException(cause));
            }
        }
        PutStaging s = staging;
        if (s != null) {
            s.close();
        }
    }

    private static RuntimeException closedException(Throwable cause) {
        if (cause instanceof RuntimeException r && (cause instanceof ConnectionClosedException
                || cause instanceof KvException)) {
            return r;
        }
        return new ConnectionClosedException("the connection closed: " + cause, cause);
    }
}
