package io.reactiverdma.reactive.impl;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.verbs.SendFlags;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WorkCompletions;
import io.reactiverdma.verbs.WrOpcode;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.util.context.Context;

import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * Host cost of the engine's own per-operation work around the two native calls, which cannot run here (no
 * RDMA device): {@code ibv_post_send} is left out after the work request is built, and {@code ibv_poll_cq}
 * is replaced by writing the completion into the {@link WorkCompletions} flyweight by hand (it is plain
 * direct memory), which the poller then reads exactly as {@link VerbsCompletionSource#poll} does. Run with
 * {@code -prof gc} for the allocation per operation ({@code gc.alloc.rate.norm}, B/op).
 * <ul>
 *   <li>{@link #pendingAcquireLookupFree}: the pending-operation table alone: acquire, lookup by wr_id,
 *       free.</li>
 *   <li>{@link #completionDispatch}: a pending entry filled as {@code EngineConnection.postLocked} fills it,
 *       the completion read from the flyweight and dispatched by the real {@link CompletionPoller#onCompletion}
 *       (lookup by wr_id, then {@link CompletionTarget#onCompletion}) into a target that does what
 *       {@code EngineConnection.onCompletion} does for a successful send minus its lock-guarded bookkeeping
 *       ({@link SendCompletionTarget}). The {@link Operation} and its sink are made once (the sink is a
 *       counting stub): this is the dispatch alone.</li>
 *   <li>{@link #sendRoundTripWithoutNativeCalls}: one {@code send(RegisteredBuffer)} end to end on one
 *       thread: the {@code Mono} that {@code EngineConnection.send} builds, subscribed; its creation callback
 *       makes the {@link Operation}, takes the pending entry and fills the {@link SendWorkRequests} entry as
 *       {@code postLocked} does; then the completion completes the Mono through the dispatch path above.</li>
 * </ul>
 * Single thread, so no lock is ever contended; the poller thread is constructed but never started.
 *
 * <p>Run: {@code scripts/bench-engine} (JMH options pass through; {@code -prof gc} by default).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class EngineOverheadBenchmark {
    /** One connection's CQ with the default depths: SEND_QUEUE_DEPTH + 1 (credit slot) + RECEIVE_QUEUE_DEPTH. */
    static final int PENDING_CAPACITY = RdmaOption.SEND_QUEUE_DEPTH.defaultValue() + 1
            + RdmaOption.RECEIVE_QUEUE_DEPTH.defaultValue();
    /** The message: 64 bytes (as the echo demo), so inline with the default MAX_INLINE_DATA. */
    static final int MESSAGE_SIZE = 64;

    private PendingOperations table;

    @Setup
    public void setupTable() {
        table = new PendingOperations(PENDING_CAPACITY);
    }

    @TearDown
    public void checkTable() {
        check(table.inUse() == 0 && table.staleCompletions() == 0, "pending table: " + table.inUse() + " in use, "
                + table.staleCompletions() + " stale");
    }

    /** The pending-operation table alone. Returns the wr_id (consumed by JMH). */
    @Benchmark
    public long pendingAcquireLookupFree() {
        PendingOperation p = table.acquire();
        long wrId = p.wrId();
        PendingOperation found = table.lookup(wrId);
        table.free(found); // a failed lookup (null) throws here
        return wrId;
    }

    /** One poll's worth of dispatch (one completion) for a pre-made operation. Returns what poll returned. */
    @Benchmark
    public int completionDispatch(Engine e) {
        PendingOperation p = e.pending.acquire();
        e.fillPendingAsPostLocked(p, e.target, e.premade);
        e.source.completed(p.wrId(), WcStatus.SUCCESS.value(), WcOpcode.SEND.value(), MESSAGE_SIZE);
        return e.source.poll(e.poller);
    }

    /**
     * One send of a registered buffer, subscribe to completion, on one thread. Returns the subscription's
     * Disposable with {@code subscribe()} (null with the reused subscriber).
     */
    @Benchmark
    public Disposable sendRoundTripWithoutNativeCalls(Engine e, Subscribers s) {
        Mono<Void> send = e.send(e.data);
        Disposable d = null;
        if (s.reuse) {
            send.subscribe(s.reused);
        } else {
            d = send.subscribe();
        }
        // The device executed the work request: its completion, with the wr_id the chain was posted with.
        e.source.completed(e.sendWr.wrId(0), WcStatus.SUCCESS.value(), WcOpcode.SEND.value(), MESSAGE_SIZE);
        if (e.source.poll(e.poller) != 1) {
            throw new IllegalStateException("no completion polled");
        }
        return d;
    }

    // ------------------------------------------------------------------------------------------ states

    /** The engine pieces of one connection and its CQ, with NOOP or registry-backed metrics. */
    @State(Scope.Thread)
    public static class Engine {
        @Param({"noop", "recording"})
        public String metrics;

        EngineMetrics engineMetrics;
        SimpleMeterRegistry registry;
        PendingOperations pending;
        WorkCompletionsSource source;
        CompletionPoller poller;
        SendCompletionTarget target;
        /** A SEND of 64 bytes whose sink only counts: the dispatch benchmark's operation, made once. */
        Operation premade;
        CountingSink premadeSink;

        // What EngineConnection.postLocked and send(RegisteredBuffer) use.
        BufferPool pool;
        RegisteredBuffer data;
        final SendWorkRequests sendWr = new SendWorkRequests(1, 1);
        final int inlineLimit = RdmaOption.MAX_INLINE_DATA.defaultValue();
        final int maxMessageSize = RdmaOption.RECEIVE_BUFFER_SIZE.defaultValue();
        long outstanding;

        @Setup
        public void setup() {
            switch (metrics) {
                case "noop" -> engineMetrics = EngineMetrics.NOOP;
                case "recording" -> {
                    registry = new SimpleMeterRegistry();
                    engineMetrics = EngineMetricsHostTest.into(registry);
                }
                default -> throw new IllegalArgumentException("metrics: noop or recording, got " + metrics);
            }
            pending = new PendingOperations(PENDING_CAPACITY);
            source = new WorkCompletionsSource(RdmaOption.POLL_BATCH_SIZE.defaultValue());
            poller = new CompletionPoller("bench-poller", source, pending, PollerIdleStrategy.busySpin(), engineMetrics);
            target = new SendCompletionTarget(pending, engineMetrics);
            premadeSink = new CountingSink();
            premade = new Operation(OperationType.SEND, premadeSink, null, false, MESSAGE_SIZE, 0, 0, 0, 0, 0);
            pool = new BufferPool(new FakeRegistrar(), 64 * 1024, "benchmark pool");
            data = pool.allocate(MESSAGE_SIZE);
        }

        @TearDown
        public void check() {
            EngineOverheadBenchmark.check(pending.inUse() == 0 && pending.staleCompletions() == 0,
                    "pending table: " + pending.inUse() + " in use, " + pending.staleCompletions() + " stale");
            EngineOverheadBenchmark.check(target.failures == 0 && premadeSink.errors == 0,
                    target.failures + " failed completions, " + premadeSink.errors + " errors signalled");
            EngineOverheadBenchmark.check(((BufferPool.PooledBuffer) data).holds() == 1,
                    "data buffer holds: " + ((BufferPool.PooledBuffer) data).holds());
        }

        /** The entry's fields as EngineConnection.postLocked sets them (replicated). */
        void fillPendingAsPostLocked(PendingOperation p, CompletionTarget connection, Operation op) {
            p.connection = connection;
            p.type = op.type;
            p.operation = op;
            p.postedNs = System.nanoTime();
        }

        /**
         * The Mono of EngineConnection.send(RegisteredBuffer) (callbacks on the poller thread, the default:
         * no publishOn). Replicated from it: local() and hold(); checkMessageSize without its lock (the
         * peer's size is a constant here); submit() registers the same onCancel hook, then, instead of its
         * lock, the waiting queue and drainLocked, posts at once (what drainLocked does with a free slot and
         * no credit flow control); its flushDeferred (nothing deferred) is left out.
         */
        Mono<Void> send(RegisteredBuffer buffer) {
            return Mono.<Object>create(sink -> {
                EngineBuffer b = local(buffer);
                if (b.length() > maxMessageSize) {
                    throw new IllegalStateException("message too large");
                }
                if (!b.retain()) {
                    throw EngineBuffer.released();
                }
                Operation op = new Operation(OperationType.SEND, sink, b, false, b.length(), 0, 0, 0, 0, 0);
                op.sink.onCancel(() -> cancel(op)); // as submit(): the hook captures the connection and op
                postLocked(op);
            }).then();
        }

        /**
         * EngineConnection.cancel for an operation already posted (it is not in the waiting queue, and keeps
         * its holds until its completion). Never called here: nothing cancels.
         */
        private void cancel(Operation op) {
            op.cancelled = true;
        }

        /** EngineConnection.local(RegisteredBuffer, String) (replicated). */
        private EngineBuffer local(RegisteredBuffer buffer) {
            if (!(buffer instanceof EngineBuffer b)) {
                throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER, "foreign buffer");
            }
            if (b.pool() != pool) {
                throw new InvalidRequestException(InvalidRequestException.Reason.FOREIGN_BUFFER, "other device");
            }
            if (b.isReleased()) {
                throw EngineBuffer.released();
            }
            return b;
        }

        /**
         * EngineConnection.postLocked (the same calls; the connection's lock is not taken), with
         * {@code qp.postSend(sendWr)} left out (the chain is built in native memory and not posted) and the
         * flow-control bookkeeping ({@code flow.posted}) left out.
         */
        private void postLocked(Operation op) {
            PendingOperation p = pending.acquire(target, op.type, op, -1, System.nanoTime());
            sendWr.clear();
            boolean inline = op.writeWorkRequest(sendWr, p.wrId(), inlineLimit);
            // qp.postSend(sendWr): the native call, not made on the host.
            // flow.posted(op.consumesPeerReceive()): slot and credit counts under the connection's lock, left out.
            outstanding++;
            engineMetrics.outstanding(1);
            if (inline) {
                op.releaseHolds();
            }
        }
    }

    /** The subscriber of the round trip: one reused for every operation, or Mono.subscribe()'s own. */
    @State(Scope.Thread)
    public static class Subscribers {
        @Param({"reused", "subscribe"})
        public String subscriber;

        boolean reuse;
        final CountingSubscriber reused = new CountingSubscriber();

        @Setup
        public void setup() {
            reuse = switch (subscriber) {
                case "reused" -> true;
                case "subscribe" -> false;
                default -> throw new IllegalArgumentException("subscriber: reused or subscribe, got " + subscriber);
            };
        }

        @TearDown
        public void check() {
            EngineOverheadBenchmark.check(reused.errors == 0 && reused.subscribed == reused.completed,
                    "reused subscriber: " + reused.subscribed + " subscribed, " + reused.completed + " completed, "
                            + reused.errors + " errors");
        }
    }

    // ---------------------------------------------------------------------------------- host stand-ins

    /**
     * VerbsCompletionSource without its CQ: {@link #poll} is VerbsCompletionSource.poll's loop over a
     * {@link WorkCompletions} flyweight, but the entries were written by {@link #completed} instead of by
     * ibv_poll_cq.
     */
    static final class WorkCompletionsSource implements CompletionSource {
        private final WorkCompletions wcs;
        private int written;

        WorkCompletionsSource(int batch) {
            wcs = new WorkCompletions(batch);
        }

        /** What the provider's poll_cq writes into entry {@code written} of the array (struct ibv_wc). */
        void completed(long wrId, int status, int opcode, int byteLen) {
            int o = written++ * WorkCompletions.SIZE;
            var b = wcs.buffer();
            b.putLong(o + WorkCompletions.WR_ID_OFFSET, wrId);
            b.putInt(o + WorkCompletions.STATUS_OFFSET, status);
            b.putInt(o + WorkCompletions.OPCODE_OFFSET, opcode);
            b.putInt(o + WorkCompletions.VENDOR_ERR_OFFSET, 0);
            b.putInt(o + WorkCompletions.BYTE_LEN_OFFSET, byteLen);
            b.putInt(o + WorkCompletions.IMM_DATA_OFFSET, 0);
            b.putInt(o + WorkCompletions.WC_FLAGS_OFFSET, 0);
        }

        @Override
        public int poll(Handler handler) {
            int n = written; // VerbsCompletionSource: int n = cq.poll(wcs);
            written = 0;
            for (int i = 0; i < n; i++) {
                handler.onCompletion(wcs.wrId(i), wcs.statusCode(i), wcs.opcodeCode(i), wcs.vendorErr(i),
                        wcs.byteLen(i), wcs.immData(i), wcs.wcFlags(i));
            }
            return n;
        }

        @Override
        public boolean supportsEvents() {
            return false;
        }

        @Override
        public void arm() {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean await(long timeoutNs) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void wakeup() {
        }

        @Override
        public void close() {
        }
    }

    /**
     * What EngineConnection.onCompletion does for a send-queue completion (replicated): read the entry,
     * free it, metrics, signal the operation. Left out: the failure branch (every completion here succeeds;
     * a failure is counted and fails the run), the {@code synchronized (lock)} section (outstanding count,
     * flow-control slot/credit bookkeeping, closeCause, drainLocked and maybeAdvertiseLocked), flushDeferred
     * and the close checks.
     */
    static final class SendCompletionTarget implements CompletionTarget {
        private final PendingOperations pending;
        private final EngineMetrics metrics;
        long failures;

        SendCompletionTarget(PendingOperations pending, EngineMetrics metrics) {
            this.pending = pending;
            this.metrics = metrics;
        }

        @Override
        public void onCompletion(PendingOperation p, int status, int opcode, int vendorErr, int byteLen, int imm,
                int wcFlags) {
            OperationType type = p.type;
            Operation op = p.operation;
            long latencyNs = System.nanoTime() - p.postedNs;
            pending.free(p);
            boolean success = status == WcStatus.SUCCESS.value();
            boolean flushed = status == WcStatus.WR_FLUSH_ERR.value();
            metrics.outstanding(-1);
            if (!success) {
                failures++;
            }
            metrics.completed(type, success, flushed, latencyNs, success && op != null ? op.length : 0);
            if (op != null && success) {
                op.succeed();
            }
        }
    }

    /** A MonoSink that counts its signals: the pre-made operation's, so no Reactor work is measured. */
    static final class CountingSink implements MonoSink<Object> {
        long successes;
        long errors;

        @Override
        public void success() {
            successes++;
        }

        @Override
        public void success(Object value) {
            successes++;
        }

        @Override
        public void error(Throwable e) {
            errors++;
        }

        @Override
        @SuppressWarnings("deprecation") // abstract in MonoSink: must be implemented
        public Context currentContext() {
            return Context.empty();
        }

        @Override
        public MonoSink<Object> onRequest(LongConsumer consumer) {
            return this;
        }

        @Override
        public MonoSink<Object> onCancel(Disposable d) {
            return this;
        }

        @Override
        public MonoSink<Object> onDispose(Disposable d) {
            return this;
        }
    }

    /** A subscriber reused for every operation (each subscription ends before the next starts). */
    static final class CountingSubscriber implements CoreSubscriber<Void> {
        long subscribed;
        long completed;
        long errors;

        @Override
        public void onSubscribe(Subscription s) {
            subscribed++;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Void v) {
        }

        @Override
        public void onError(Throwable t) {
            errors++;
        }

        @Override
        public void onComplete() {
            completed++;
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException("benchmark invariant broken: " + what);
        }
    }
}
