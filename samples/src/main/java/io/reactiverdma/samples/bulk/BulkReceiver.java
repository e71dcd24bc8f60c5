package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.samples.bulk.BulkProtocol.Advertise;
import io.reactiverdma.samples.bulk.BulkProtocol.Free;
import io.reactiverdma.samples.bulk.BulkProtocol.Hello;
import io.reactiverdma.samples.bulk.BulkProtocol.Message;
import io.reactiverdma.samples.bulk.BulkProtocol.Ready;
import io.reactiverdma.samples.bulk.BulkProtocol.Result;
import io.reactiverdma.samples.bulk.BulkProtocol.Written;
import io.reactiverdma.samples.bulk.BulkTransferException.Reason;
import io.reactiverdma.samples.common.ServerLimits;
import org.reactivestreams.Publisher;
import reactor.core.publisher.BufferOverflowStrategy;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Signal;
import reactor.core.scheduler.Schedulers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The receiving side of the bulk sample: an RDMA server that takes one transfer per connection, hashes what
 * arrives with SHA-256 (and writes it to a file if asked), and answers with its byte count and hash.
 *
 * <p>Push: it registers a ring of {@code window} chunks with remote WRITE access only, advertises each slot,
 * and re-advertises a slot once the chunk written there is consumed. Pull: it READs each announced chunk into
 * one of {@code window} local buffers and frees the sender's slot once the chunk is consumed. Either way it
 * holds {@code window} chunks, whatever the size of the transfer; a slow consumer (the hash, the disk, or
 * {@link Config#delayPerChunk()}) slows the sender down, because the sender gets a slot back only after that.
 * Consuming runs on the bounded elastic scheduler, one chunk at a time in order.
 */
public final class BulkReceiver implements AutoCloseable {
    /**
     * @param out           where to write the bytes (each transfer overwrites it; while one transfer writes it,
     *                      another is refused as busy, so concurrent transfers cannot interleave in it); null:
     *                      hash and discard
     * @param stallTimeout  a transfer fails when no byte arrives for this long
     * @param delayPerChunk a pause before consuming each chunk (Duration.ZERO: none), to show backpressure
     * @param maxPinnedBytes the chunk buffers all transfers together may hold (each HELLO asks for chunk x
     *                      window, up to 64 MiB); a HELLO beyond it is refused (REFUSED, the sender is told)
     */
    public record Config(Path out, Duration stallTimeout, Duration delayPerChunk, long maxPinnedBytes) {
        /** Two transfers of the largest ring at once. */
        public static final long DEFAULT_MAX_PINNED_BYTES = 2 * BulkOptions.MAX_RING_BYTES;

        public Config {
            Objects.requireNonNull(stallTimeout, "stallTimeout");
            Objects.requireNonNull(delayPerChunk, "delayPerChunk");
            if (maxPinnedBytes < 1) {
                throw new IllegalArgumentException("maxPinnedBytes must be positive, got " + maxPinnedBytes);
            }
        }

        public Config(Path out, Duration stallTimeout, Duration delayPerChunk) {
            this(out, stallTimeout, delayPerChunk, DEFAULT_MAX_PINNED_BYTES);
        }
    }

    private final Config config;
    private final Consumer<String> log;
    private final Consumer<String> progressLog;
    private final Consumer<ReceiveReport> onReport;
    private final AtomicLong bytesConsumed = new AtomicLong();
    private final PinnedBudget pinned;
    /** True while a transfer writes {@link Config#out()}: one writer at a time, or the file is garbage. */
    private final AtomicBoolean outputTaken = new AtomicBoolean();
    private volatile DisposableRdmaServer server;

    private BulkReceiver(Config config, Consumer<String> log, Consumer<String> progressLog,
            Consumer<ReceiveReport> onReport) {
        this.config = config;
        this.pinned = new PinnedBudget(config.maxPinnedBytes());
        this.log = log;
        this.progressLog = progressLog;
        this.onReport = onReport;
    }

    /**
     * Binds a receiver and returns once it listens.
     *
     * @param host        a local address of an RDMA device's netdev
     * @param port        rdma_cm port, 0 for any free one
     * @param log         one line per transfer started and ended
     * @param progressLog progress lines of each transfer, at most one a second; null for none
     * @param onReport    each transfer's report, once its connection is done with
     * @throws io.reactiverdma.reactive.RdmaException when the address cannot be bound
     */
    public static BulkReceiver start(String host, int port, Config config, Duration bindTimeout, Consumer<String> log,
            Consumer<String> progressLog, Consumer<ReceiveReport> onReport) {
        return start(host, port, config, ServerLimits.DEFAULTS, bindTimeout, log, progressLog, onReport);
    }

    /** The same, with the engine's server options {@code limits}. */
    public static BulkReceiver start(String host, int port, Config config, ServerLimits limits, Duration bindTimeout,
            Consumer<String> log, Consumer<String> progressLog, Consumer<ReceiveReport> onReport) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(limits, "limits");
        BulkReceiver receiver = new BulkReceiver(Objects.requireNonNull(config, "config"),
                Objects.requireNonNull(log, "log"), progressLog, Objects.requireNonNull(onReport, "onReport"));
        receiver.server = limits.applyTo(RdmaServer.create()
                        .host(host)
                        .port(port)
                        .option(RdmaOption.RECEIVE_BUFFER_SIZE, BulkProtocol.MAX_MESSAGE_SIZE)
                        // the HELLO and one WRITE-with-immediate (push) or READY (pull) per slot of the largest window
                        .option(RdmaOption.RECEIVE_QUEUE_DEPTH, BulkOptions.MAX_WINDOW + 4))
                .handle(receiver::handle)
                .bindNow(bindTimeout);
        return receiver;
    }

    public InetSocketAddress address() {
        return server.address();
    }

    /** Bytes consumed over all transfers so far. */
    public long bytesConsumed() {
        return bytesConsumed.get();
    }

    public int connectionCount() {
        return server.connectionCount();
    }

    /** Completes once the server stopped listening and every connection is closed. */
    public Mono<Void> onDispose() {
        return server.onDispose();
    }

    /** Stops listening, closes every connection and waits at most 30 s for that. */
    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(30));
    }

    private Publisher<Void> handle(RdmaConnection conn) {
        return new Session(conn).run();
    }

    /** One transfer. */
    private final class Session {
        private final RdmaConnection conn;
        private final InetSocketAddress peer;
        private final MessageDigest sha256 = Hashing.sha256();
        private final AtomicLong consumed = new AtomicLong();
        private final long startNs = System.nanoTime();
        private volatile Hello hello;
        private volatile ChunkPlan plan;
        private volatile ChunkWindow window;
        private volatile FileChannel file;
        private RegisteredBuffer[] buffers;
        private long nextSeq;
        private volatile long ringBytes; // taken from the budget at HELLO, given back by cleanUp
        private volatile boolean holdsOutput; // took outputTaken at HELLO, gives it back in cleanUp

        Session(RdmaConnection conn) {
            this.conn = conn;
            this.peer = conn.remoteAddress();
        }

        Mono<Void> run() {
            // Control messages are tiny: decoded and released at once, so the engine keeps every receive
            // posted. The buffer after them is bounded: a sender keeps at most `window` chunks in flight, and
            // one that sends more breaks the protocol (the buffer overflows and the transfer fails).
            Flux<Message> messages = conn.receive()
                    .map(this::decodeAndRelease)
                    .onBackpressureBuffer(BulkOptions.MAX_WINDOW + 4, m -> { }, BufferOverflowStrategy.ERROR);
            Mono<Void> transfer = messages.switchOnFirst(this::start).then();
            Mono<Void> watchdog = Watchdog.watch(consumed::get, () -> plan == null ? -1 : plan.totalBytes(),
                    config.stallTimeout(), progressLog,
                    b -> new BulkTransferException(Reason.STALLED, "no data from the sender " + peer + " for "
                            + config.stallTimeout().toMillis() + " ms after " + b + " bytes", b, null));
            return Mono.firstWithSignal(transfer, watchdog)
                    .then(Mono.defer(this::finish))
                    .onErrorMap(IllegalStateException.class, e -> protocol(e.getMessage()))
                    .onErrorMap(e -> !(e instanceof BulkTransferException), this::senderGone)
                    .doOnError(e -> report((BulkTransferException) e))
                    .onErrorResume(e -> Mono.empty()) // reported; ending the handler closes the connection
                    .doFinally(s -> cleanUp());
        }

        private Publisher<Void> start(Signal<? extends Message> first, Flux<Message> all) {
            if (!first.hasValue()) {
                return all.then(); // closed (or failed) before the HELLO: finish() reports it
            }
            if (!(first.get() instanceof Hello h)) {
                return Mono.error(protocol("the first message is " + first.get() + ", not a HELLO"));
            }
            String refusal = BulkOptions.refusal(h.chunkSize(), h.window(), h.totalBytes());
            if (refusal != null) {
                return conn.send(BulkProtocol.encode(new BulkProtocol.Error(refusal)))
                        .then(Mono.error(new BulkTransferException(Reason.REFUSED, "refused the transfer of "
                                + peer + ": " + refusal, 0, null)));
            }
            if (config.out() != null) {
                if (!outputTaken.compareAndSet(false, true)) {
                    String why = "busy: another transfer is writing " + config.out();
                    return conn.send(BulkProtocol.encode(new BulkProtocol.Error(why)))
                            .then(Mono.error(new BulkTransferException(Reason.REFUSED, "refused the transfer of "
                                    + peer + ": " + why, 0, null)));
                }
                holdsOutput = true;
            }
            long ring = (long) h.chunkSize() * h.window();
            if (!pinned.tryTake(ring)) {
                String why = "busy: its transfers have " + pinned.taken() + " of " + pinned.limit()
                        + " bytes of chunk buffers pinned, this one needs " + ring;
                return conn.send(BulkProtocol.encode(new BulkProtocol.Error(why)))
                        .then(Mono.error(new BulkTransferException(Reason.REFUSED, "refused the transfer of "
                                + peer + ": " + why, 0, null)));
            }
            ringBytes = ring;
            hello = h;
            plan = new ChunkPlan(h.totalBytes(), h.chunkSize());
            window = new ChunkWindow(h.window());
            log.accept("transfer from " + peer + ": " + Progress.bytes(h.totalBytes()) + " (" + h.totalBytes()
                    + " bytes), " + h.mode().label() + ", " + Progress.bytes(h.chunkSize()) + " chunks, window "
                    + h.window() + (config.out() != null ? ", to " + config.out() : ", hashed and discarded"));
            Flux<Message> chunks = all.skip(1).take(plan.chunkCount());
            // Opening the file and registering the ring (pinning up to 64 MiB) are slow system calls: not on
            // the poller thread, which delivered the HELLO.
            return Mono.fromRunnable(this::openOutput).subscribeOn(Schedulers.boundedElastic())
                    // tell the sender why, rather than just closing
                    .onErrorResume(BulkTransferException.class, e -> conn.send(BulkProtocol.encode(
                            new BulkProtocol.Error(e.getMessage()))).onErrorResume(x -> Mono.empty()).then(Mono.error(e)))
                    .thenMany(Flux.defer(() -> h.mode() == TransferMode.PUSH ? push(chunks) : pull(chunks)));
        }

        /** Push: advertise every slot; consume each chunk written there, in order; re-advertise its slot. */
        private Flux<Void> push(Flux<Message> written) {
            int w = hello.window();
            int chunkSize = plan.chunkSize();
            RegisteredBuffer ring = conn.memory().allocateRegistered(w * chunkSize, RemoteAccess.WRITE);
            buffers = new RegisteredBuffer[] {ring};
            Flux<Void> advertiseAll = Flux.range(0, w).concatMap(slot -> advertise(ring, slot));
            Flux<Void> consumeAll = written
                    .concatMap(m -> {
                        if (!(m instanceof Written c)) {
                            return Mono.error(protocol("expected a WRITE with immediate, got " + m));
                        }
                        long seq = nextSeq++;
                        if (!window.contains(c.slot()) || c.seqLowBits() != (seq & 0xFFFF)) {
                            return Mono.error(protocol("chunk " + seq + " came with slot " + c.slot()
                                    + " and sequence bits " + c.seqLowBits()));
                        }
                        window.issue(c.slot()); // fails if the slot still held an unconsumed chunk
                        return consume(seq, ring.slice(c.slot() * chunkSize, chunkSize))
                                .then(Mono.fromRunnable(() -> window.complete(c.slot())))
                                .thenReturn(new Consumed(c.slot(), seq));
                    }, 1)
                    // the chunk `window` places further on goes to this slot; none past the last
                    .flatMap(c -> c.seq() + w < plan.chunkCount() ? advertise(ring, c.slot()) : Mono.<Void>empty(), w);
            return advertiseAll.thenMany(consumeAll);
        }

        private Mono<Void> advertise(RegisteredBuffer ring, int slot) {
            int chunkSize = plan.chunkSize();
            return conn.send(BulkProtocol.encode(new Advertise(slot,
                    ring.slice(slot * chunkSize, chunkSize).remoteRegion())));
        }

        /** Pull: READ each announced chunk into the local buffer of its slot; consume in order; free the slot. */
        private Flux<Void> pull(Flux<Message> announced) {
            int w = hello.window();
            buffers = new RegisteredBuffer[w];
            for (int i = 0; i < w; i++) {
                buffers[i] = conn.memory().allocate(plan.chunkSize());
            }
            return announced
                    .map(m -> {
                        long seq = nextSeq++;
                        if (!(m instanceof Ready r) || r.seq() != seq || !window.contains(r.slot())
                                || r.region().length() != plan.length(seq)) {
                            throw protocol("expected READY for chunk " + seq + " of " + plan.length(seq)
                                    + " bytes, got " + m);
                        }
                        window.issue(r.slot());
                        return r;
                    })
                    // READs go out as they are announced (RC completes them in order); consuming is sequential
                    .flatMapSequential(r -> conn.read(buffers[r.slot()].slice(0, plan.length(r.seq())), r.region())
                            .thenReturn(r), w, 1)
                    .concatMap(r -> consume(r.seq(), buffers[r.slot()]).thenReturn(r), 1)
                    .flatMap(r -> {
                        window.complete(r.slot());
                        return conn.send(BulkProtocol.encode(new Free(r.slot(), r.seq())));
                    }, w);
        }

        /** Hashes chunk {@code seq} (and writes it to the file), on the bounded elastic scheduler. */
        private Mono<Void> consume(long seq, RegisteredBuffer chunk) {
            int length = plan.length(seq);
            Mono<Void> pause = config.delayPerChunk().isZero() ? Mono.empty() : Mono.delay(config.delayPerChunk()).then();
            return pause.then(Mono.<Void>fromRunnable(() -> {
                ByteBuffer view = chunk.buffer().limit(length);
                sha256.update(view.duplicate());
                if (file != null) {
                    try {
                        long at = plan.offset(seq);
                        while (view.hasRemaining()) {
                            at += file.write(view, at);
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                consumed.addAndGet(length);
                bytesConsumed.addAndGet(length);
            }).subscribeOn(Schedulers.boundedElastic()))
                    .onErrorMap(UncheckedIOException.class, e -> new BulkTransferException(Reason.IO,
                            "writing " + config.out() + " failed: " + e.getCause().getMessage(), consumed.get(),
                            e.getCause()));
        }

        /** After the last chunk: check that every byte came, send the RESULT, wait for the sender to close. */
        private Mono<Void> finish() {
            if (hello == null) {
                return Mono.error(senderGone(null));
            }
            if (consumed.get() < plan.totalBytes()) {
                return Mono.error(senderGone(null));
            }
            byte[] digest = sha256.digest();
            report(new ReceiveReport(peer, hello.mode(), plan.totalBytes(), consumed.get(), digest,
                    System.nanoTime() - startNs, window.maxInFlight(), null));
            return conn.send(BulkProtocol.encode(new Result(consumed.get(), digest)))
                    // the sender closes once it has the result; do not wait for ever if it does not
                    .then(conn.onDispose().timeout(config.stallTimeout()))
                    .onErrorResume(e -> Mono.empty());
        }

        private void openOutput() {
            if (config.out() == null) {
                return;
            }
            try {
                file = FileChannel.open(config.out(), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING);
            } catch (IOException e) {
                throw new BulkTransferException(Reason.IO, "cannot write " + config.out() + ": " + e, 0, e);
            }
        }

        private Message decodeAndRelease(RdmaMessage m) {
            try {
                if (m.hasImmediate() && m.length() == 0) {
                    return Written.of(m.immediate());
                }
                return BulkProtocol.decode(m.data());
            } finally {
                m.release();
            }
        }

        private BulkTransferException senderGone(Throwable cause) {
            long total = plan == null ? 0 : plan.totalBytes();
            String what = hello == null ? "closed the connection before announcing a transfer"
                    : "went away after " + consumed.get() + " of " + total + " bytes";
            return new BulkTransferException(Reason.PEER_GONE, "the sender " + peer + " " + what
                    + (cause != null ? ": " + cause : ""), consumed.get(), cause);
        }

        private BulkTransferException protocol(String what) {
            return new BulkTransferException(Reason.PROTOCOL, "the sender " + peer + " broke the protocol: " + what,
                    consumed.get(), null);
        }

        private void report(BulkTransferException failure) {
            if (hello == null && failure.reason() == Reason.PEER_GONE) {
                log.accept("connection from " + peer + " closed without a transfer");
                return;
            }
            log.accept("transfer from " + peer + " FAILED: " + failure.getMessage());
            report(new ReceiveReport(peer, hello == null ? null : hello.mode(), plan == null ? 0 : plan.totalBytes(),
                    consumed.get(), new byte[32], System.nanoTime() - startNs,
                    window == null ? 0 : window.maxInFlight(), failure));
        }

        private void report(ReceiveReport r) {
            if (r.succeeded()) {
                log.accept("received " + r.bytes() + " bytes from " + peer + " in " + seconds(r.elapsedNs()) + " ("
                        + Progress.rate(r.bytes(), r.elapsedNs()) + "), sha256 " + Hashing.hex(r.sha256()));
            }
            onReport.accept(r);
        }

        private void cleanUp() {
            if (ringBytes > 0) {
                pinned.giveBack(ringBytes);
                ringBytes = 0;
            }
            if (buffers != null) {
                for (RegisteredBuffer b : buffers) {
                    b.release();
                }
            }
            FileChannel f = file;
            if (f != null) {
                try {
                    f.close();
                } catch (IOException e) {
                    log.accept("closing " + config.out() + " failed: " + e);
                }
            }
            if (holdsOutput) {
                holdsOutput = false;
                outputTaken.set(false); // after the close: the next transfer's open truncates a closed file
            }
        }
    }

    static String seconds(long ns) {
        return String.format(java.util.Locale.ROOT, "%.1f s", ns / 1e9);
    }

    private record Consumed(int slot, long seq) {
    }
}
