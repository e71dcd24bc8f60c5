package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.samples.bulk.BulkProtocol.Advertise;
import io.reactiverdma.samples.bulk.BulkProtocol.Free;
import io.reactiverdma.samples.bulk.BulkProtocol.Hello;
import io.reactiverdma.samples.bulk.BulkProtocol.Message;
import io.reactiverdma.samples.bulk.BulkProtocol.Ready;
import io.reactiverdma.samples.bulk.BulkProtocol.Result;
import io.reactiverdma.samples.bulk.BulkTransferException.Reason;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;
import reactor.util.concurrent.Queues;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * The sending side of one bulk transfer over an open connection, on the reactive API only.
 *
 * <p>It owns nothing of the receiver: it moves a chunk only into a slot the receiver made free. In push mode
 * the receiver advertises its slots (ADVERTISE) and the sender RDMA-WRITEs each chunk, with an immediate naming
 * the slot, from one of its {@code window} local buffers; in pull mode the sender fills one of its
 * {@code window} registered slots (remote READ access only), announces it (READY), and reuses it when the
 * receiver says it read it (FREE). The free slots arrive as a {@code Flux} that is zipped with the chunk
 * sequence numbers, so the next chunk is read from the source only when a slot is free: the slower side sets
 * the pace, at most {@code window} chunks are ever in flight ({@link #window()}), and memory does not depend
 * on the size of the stream. Source reads and hashing run on the bounded elastic scheduler, never on the
 * completion poller.
 */
public final class BulkSender {
    private final RdmaConnection conn;
    private final ChunkSource source;
    private final TransferMode mode;
    private final ChunkPlan plan;
    private final int windowSize;
    private final Duration stallTimeout;
    private final Consumer<String> progressLog;
    private final ChunkWindow window;
    private final AtomicLong bytesIssued = new AtomicLong();
    private final AtomicLong bytesConfirmed = new AtomicLong();
    private final Sinks.Many<Integer> freeSlots;
    private final Sinks.One<Result> result = Sinks.one();
    private final AtomicBoolean resultReceived = new AtomicBoolean();
    private final Sinks.Empty<Void> failure = Sinks.empty();
    private final AtomicReferenceArray<RemoteRegion> advertised;
    private final AtomicReference<ConnectionEvent> lastEvent = new AtomicReference<>();
    private final MessageDigest sha256 = Hashing.sha256();
    private RegisteredBuffer[] buffers;

    /**
     * @param conn         a connection to a bulk receiver, made with {@link #client}
     * @param source       the bytes to send (not closed here)
     * @param mode         push or pull
     * @param chunkSize    bytes per chunk, 1..{@link BulkOptions#MAX_CHUNK_SIZE}
     * @param window       chunks in flight at most, 1..{@link BulkOptions#MAX_WINDOW}
     * @param stallTimeout fail when no byte is confirmed for this long
     * @param progressLog  receives a progress line at most once a second; null for none
     */
    public BulkSender(RdmaConnection conn, ChunkSource source, TransferMode mode, int chunkSize, int window,
            Duration stallTimeout, Consumer<String> progressLog) {
        this.conn = Objects.requireNonNull(conn, "conn");
        this.source = Objects.requireNonNull(source, "source");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.stallTimeout = Objects.requireNonNull(stallTimeout, "stallTimeout");
        BulkOptions.checkChunking(chunkSize, window);
        this.plan = new ChunkPlan(source.size(), chunkSize);
        this.windowSize = window;
        this.window = new ChunkWindow(window);
        this.progressLog = progressLog;
        this.freeSlots = Sinks.many().unicast().onBackpressureBuffer(Queues.<Integer>get(window).get());
        this.advertised = new AtomicReferenceArray<>(window);
    }

    /** A client whose connections suit a sender with {@code window} chunks in flight. */
    public static RdmaClient client(String host, int port, int window, Duration connectTimeout) {
        return RdmaClient.create()
                .host(host)
                .port(port)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, BulkProtocol.MAX_MESSAGE_SIZE)
                // a message per slot (ADVERTISE or FREE) and the RESULT or ERROR
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, window + 4)
                .option(RdmaOption.CONNECT_TIMEOUT, connectTimeout);
    }

    /**
     * Sends the whole source. Emits the report once the receiver confirmed every byte and sent its SHA-256
     * (whether it matches is the report's {@link SendReport#hashesMatch()}); the connection stays open. Fails
     * with {@link BulkTransferException}: {@code PEER_GONE} when the receiver's connection closed or an
     * operation on it failed before its result arrived, {@code STALLED} when no byte was confirmed for the stall
     * timeout, {@code REFUSED}, {@code PROTOCOL} or {@code IO}. Cancelling stops sending (dispose the connection
     * to stop what is in flight). Subscribe once.
     */
    public Mono<SendReport> run() {
        return Mono.defer(() -> {
            long startNs = System.nanoTime();
            Disposable events = conn.events().subscribe(lastEvent::set, e -> { });
            // Every control message is decoded and released at once, so the engine keeps the connection's
            // RECEIVE_QUEUE_DEPTH receives posted; the slots it frees go to a queue that cannot overflow
            // unless the receiver breaks the protocol (it has only `window` slots).
            Disposable control = conn.receive().subscribe(this::onControl, this::onControlEnd, () -> onControlEnd(null));
            Mono<SendReport> transfer = conn.send(BulkProtocol.encode(new Hello(mode, plan.chunkSize(), windowSize,
                            plan.totalBytes())))
                    .then(plan.chunkCount() == 0 ? Mono.empty() : mode == TransferMode.PUSH ? push() : pull())
                    .then(result.asMono())
                    .map(r -> new SendReport(mode, plan.totalBytes(), sha256.digest(), r.bytes(), r.sha256(),
                            System.nanoTime() - startNs, window.maxInFlight()));
            Mono<SendReport> watchdog = Watchdog.watch(bytesConfirmed::get, plan::totalBytes, stallTimeout,
                    progressLog, b -> new BulkTransferException(Reason.STALLED, "no progress for "
                            + stallTimeout.toMillis() + " ms after " + b + " of " + plan.totalBytes()
                            + " bytes: the receiver " + conn.remoteAddress() + " stopped answering" + lastEventText(),
                            b, null));
            return Mono.firstWithSignal(transfer, failure.asMono().then(Mono.<SendReport>empty()), watchdog)
                    // The connection failing under an operation is the receiver's death (or the network's);
                    // the window refusing a slot is the receiver's protocol error. Anything else is a bug:
                    // left as it is.
                    .onErrorMap(RdmaException.class, this::peerGone)
                    .onErrorMap(IllegalStateException.class, e -> protocol(e.getMessage()))
                    .doFinally(s -> {
                        control.dispose();
                        events.dispose();
                        releaseBuffers();
                    });
        });
    }

    /** Chunk slots in flight now, and the most there were (never more than the window). */
    public ChunkWindow window() {
        return window;
    }

    /** Bytes handed to the receiver so far (written, or announced for reading). */
    public long bytesIssued() {
        return bytesIssued.get();
    }

    /** Bytes the receiver has so far (push: WRITEs completed; pull: chunks it reported read). */
    public long bytesConfirmed() {
        return bytesConfirmed.get();
    }

    /** Push: fill a local buffer for each advertised slot, then WRITE it there with the slot as immediate. */
    private Mono<Void> push() {
        buffers = new RegisteredBuffer[windowSize];
        for (int i = 0; i < windowSize; i++) {
            buffers[i] = conn.memory().allocate(plan.chunkSize());
        }
        // The WRITE that last used each local buffer: the next chunk for that slot waits for it, as the
        // receiver may re-advertise a slot before this side saw its WRITE complete.
        AtomicReferenceArray<Mono<Void>> lastWrite = new AtomicReferenceArray<>(windowSize);
        return chunks()
                .concatMap(c -> Objects.requireNonNullElse(lastWrite.get(c.slot), Mono.<Void>empty())
                        .onErrorResume(e -> Mono.empty()) // that failure is reported by its own WRITE
                        .then(fill(c, buffers[c.slot])), 1)
                .flatMap(c -> {
                    RemoteRegion target = advertised.get(c.slot);
                    if (target == null) {
                        return Mono.error(protocol("chunk " + c.seq + " got slot " + c.slot
                                + ", which was never advertised"));
                    }
                    window.issue(c.slot);
                    bytesIssued.addAndGet(c.length);
                    Mono<Void> write = conn.writeWithImmediate(buffers[c.slot].slice(0, c.length), target,
                                    BulkProtocol.immediate(c.slot, c.seq))
                            .doOnSuccess(v -> bytesConfirmed.addAndGet(c.length))
                            .cache();
                    lastWrite.set(c.slot, write);
                    return write;
                }, windowSize)
                .then();
    }

    /** Pull: fill a free registered slot, announce it; the receiver READs it and frees it. */
    private Mono<Void> pull() {
        RegisteredBuffer ring = conn.memory().allocateRegistered(windowSize * plan.chunkSize(), RemoteAccess.READ);
        buffers = new RegisteredBuffer[] {ring};
        for (int i = 0; i < windowSize; i++) {
            freeSlots.tryEmitNext(i);
        }
        return chunks()
                .concatMap(c -> {
                    RegisteredBuffer slot = ring.slice(c.slot * plan.chunkSize(), plan.chunkSize());
                    return fill(c, slot).flatMap(filled -> {
                        window.issue(c.slot);
                        bytesIssued.addAndGet(c.length);
                        return conn.send(BulkProtocol.encode(new Ready(c.slot, c.seq,
                                slot.slice(0, c.length).remoteRegion())));
                    });
                }, 1)
                .then();
    }

    /** The chunks in order, each paired with a free slot as one comes. */
    private Flux<Chunk> chunks() {
        Flux<Long> seqs = Flux.generate(() -> 0L, (seq, sink) -> {
            if (seq < plan.chunkCount()) {
                sink.next(seq);
            } else {
                sink.complete();
            }
            return seq + 1;
        });
        return seqs.zipWith(freeSlots.asFlux(), windowSize,
                (seq, slot) -> new Chunk(seq, slot, plan.offset(seq), plan.length(seq)));
    }

    /** Reads chunk {@code c} from the source into {@code buffer} and hashes it, on the bounded elastic scheduler. */
    private Mono<Chunk> fill(Chunk c, RegisteredBuffer buffer) {
        return Mono.fromCallable(() -> {
            ByteBuffer view = buffer.buffer().limit(c.length);
            try {
                source.read(c.offset, view);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            sha256.update(view.flip());
            return c;
        }).subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(UncheckedIOException.class, e -> new BulkTransferException(Reason.IO,
                        "reading the " + source.describe() + " at byte " + c.offset + " failed: "
                                + e.getCause().getMessage(), bytesConfirmed.get(), e.getCause()));
    }

    /** A control message from the receiver, on the poller thread: decode, release, act. */
    private void onControl(RdmaMessage m) {
        Message msg;
        try {
            msg = BulkProtocol.decode(m.data());
        } catch (BulkTransferException e) {
            fail(e);
            return;
        } finally {
            m.release();
        }
        if (msg instanceof Advertise a && mode == TransferMode.PUSH && window.contains(a.slot())) {
            if (a.region().length() < plan.chunkSize()) {
                fail(protocol("slot " + a.slot() + " is " + a.region().length() + " bytes, less than a chunk"));
                return;
            }
            window.complete(a.slot()); // false for the first advertisement of each slot
            advertised.set(a.slot(), a.region());
            offerSlot(a.slot());
        } else if (msg instanceof Free f && mode == TransferMode.PULL && window.contains(f.slot())) {
            if (f.seq() < 0 || f.seq() >= plan.chunkCount() || !window.complete(f.slot())) {
                fail(protocol("FREE of chunk " + f.seq() + " for slot " + f.slot() + ", which was not in flight"));
                return;
            }
            bytesConfirmed.addAndGet(plan.length(f.seq()));
            offerSlot(f.slot());
        } else if (msg instanceof Result r) {
            resultReceived.set(true);
            result.tryEmitValue(r);
        } else if (msg instanceof BulkProtocol.Error e) {
            fail(new BulkTransferException(Reason.REFUSED, "the receiver refused the transfer: " + e.text(),
                    bytesConfirmed.get(), null));
        } else {
            fail(protocol("unexpected " + msg + " in " + mode.label() + " mode"));
        }
    }

    private void offerSlot(int slot) {
        // Once every chunk is handed over, the chunk pipeline no longer takes slots (the sink is cancelled):
        // the slots the last chunks free are not needed. Only an overflow is the receiver's fault.
        if (freeSlots.tryEmitNext(slot) == Sinks.EmitResult.FAIL_OVERFLOW) {
            fail(protocol("more free slots than the window of " + windowSize));
        }
    }

    /** The receive side ended: the connection closed (or failed). Fine after the result, fatal before. */
    private void onControlEnd(Throwable error) {
        if (resultReceived.get()) {
            return;
        }
        fail(peerGone(error != null ? error
                : new ConnectionClosedException("the connection closed")));
    }

    private void fail(BulkTransferException e) {
        failure.tryEmitError(e);
    }

    private BulkTransferException peerGone(Throwable cause) {
        if (cause instanceof BulkTransferException b) {
            return b;
        }
        return new BulkTransferException(Reason.PEER_GONE, "the receiver " + conn.remoteAddress()
                + " went away after " + bytesConfirmed.get() + " of " + plan.totalBytes() + " bytes"
                + lastEventText() + ": " + cause, bytesConfirmed.get(), cause);
    }

    private BulkTransferException protocol(String what) {
        return new BulkTransferException(Reason.PROTOCOL, "the receiver broke the protocol: " + what,
                bytesConfirmed.get(), null);
    }

    private String lastEventText() {
        ConnectionEvent e = lastEvent.get();
        return e == null || e.type() == ConnectionEvent.Type.ESTABLISHED ? ""
                : " (last connection event: rdma_cm " + e.type() + ")";
    }

    private void releaseBuffers() {
        if (buffers != null) {
            for (RegisteredBuffer b : buffers) {
                b.release(); // held by any operation still in flight until it completes or is flushed
            }
        }
    }

    private record Chunk(long seq, int slot, long offset, int length) {
    }
}
