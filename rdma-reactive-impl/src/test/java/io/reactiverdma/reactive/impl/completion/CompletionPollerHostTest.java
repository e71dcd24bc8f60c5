package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.device.FakeRegistrar;
import io.reactiverdma.reactive.impl.connection.Operation;
import io.reactiverdma.reactive.impl.connection.TestOperations;
import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.metrics.EngineMetricsHostTest;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.impl.completion.RecordingTarget.Delivery;
import io.reactiverdma.reactive.impl.completion.ScriptedCompletionSource.Wc;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The poller thread against a scripted completion source and recording completion targets: delivery by
 * wr_id, batches, stale completions, tasks, stop, event-driven sleeping without lost wake-ups, and no
 * allocation per completion.
 */
class CompletionPollerHostTest {
    static final Duration WAIT = Duration.ofSeconds(10);
    static final int WR_FLUSH_ERR = 5;
    static final int REM_ACCESS_ERR = 10;

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final EngineMetrics metrics = EngineMetricsHostTest.into(registry);
    private final List<CompletionPoller> running = new ArrayList<>();

    @AfterEach
    void stopPollers() {
        for (CompletionPoller p : running) {
            p.stop();
        }
    }

    static PollerIdleStrategy strategy(String name) {
        return switch (name) {
            case "busySpin" -> PollerIdleStrategy.busySpin();
            case "backoff" -> PollerIdleStrategy.backoff(10, 5, 1_000, 100_000);
            case "eventDriven" -> PollerIdleStrategy.eventDriven();
            default -> throw new IllegalArgumentException(name);
        };
    }

    private CompletionPoller start(CompletionQueue source, PendingOperations pending, PollerIdleStrategy strategy,
            EngineMetrics m) {
        CompletionPoller p = new CompletionPoller("host-test-poller", source, pending, strategy, m);
        running.add(p);
        p.start();
        return p;
    }

    private CompletionPoller start(CompletionQueue source, PendingOperations pending, PollerIdleStrategy strategy) {
        return start(source, pending, strategy, metrics);
    }

    /** Runs {@code task} on the poller thread and returns its result. */
    private static <T> T onPoller(CompletionPoller poller, Supplier<T> task) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        poller.execute(() -> f.complete(task.get()));
        return f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    private static List<Integer> tags(RecordingTarget t) {
        return t.deliveries.stream().map(Delivery::tag).toList();
    }

    // ------------------------------------------------------------------------------------- delivery

    @ParameterizedTest
    @ValueSource(strings = {"busySpin", "backoff", "eventDriven"})
    void eachCompletionGoesToTheEntryAndTargetItsWrIdNames(String idle) throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(idle.equals("eventDriven"));
        PendingOperations pending = new PendingOperations(16);
        RecordingTarget one = new RecordingTarget(pending);
        RecordingTarget two = new RecordingTarget(pending);
        start(source, pending, strategy(idle));

        PendingOperation a = one.post(OperationType.SEND, 1);
        PendingOperation b = two.post(OperationType.READ, 2);
        PendingOperation c = one.post(OperationType.WRITE_WITH_IMMEDIATE, 3);
        long aId = a.wrId();
        long bId = b.wrId();
        long cId = c.wrId();

        // Out of posting order, over two polls, with distinct fields per completion.
        source.deliver(new Wc(cId, 0, 1, 0, 300, 0, 0), new Wc(aId, 0, 0, 0, 100, 0, 0));
        source.deliver(new Wc(bId, REM_ACCESS_ERR, 4, 0x99, 200, 0x1234, 2));
        source.awaitPolled();

        assertEquals(List.of(3, 1), tags(one), "connection one got c then a, in completion order");
        assertEquals(List.of(2), tags(two));
        Delivery dc = one.deliveries.get(0);
        assertSame(c, dc.entry());
        assertEquals(OperationType.WRITE_WITH_IMMEDIATE, dc.type());
        assertEquals(300, dc.byteLen());
        assertEquals(1, dc.opcode());
        Delivery da = one.deliveries.get(1);
        assertSame(a, da.entry());
        assertEquals(100, da.byteLen());
        Delivery db = two.deliveries.get(0);
        assertSame(b, db.entry());
        assertEquals(OperationType.READ, db.type());
        assertEquals(REM_ACCESS_ERR, db.status());
        assertEquals(4, db.opcode());
        assertEquals(0x99, db.vendorErr());
        assertEquals(200, db.byteLen());
        assertEquals(0x1234, db.imm());
        assertEquals(2, db.wcFlags());
        for (Delivery d : List.of(da, db, dc)) {
            assertSame(source.pollerThread, d.thread(), "delivered on the poller thread");
            assertEquals(1, d.generation());
        }
        assertEquals(0, pending.inUse());
        assertEquals(0, pending.staleCompletions());
    }

    @ParameterizedTest
    @ValueSource(strings = {"busySpin", "backoff", "eventDriven"})
    void theOperationBehindEachEntryGetsItsOwnResult(String idle) {
        ScriptedCompletionSource source = new ScriptedCompletionSource(idle.equals("eventDriven"));
        PendingOperations pending = new PendingOperations(16);
        BufferPool pool = new BufferPool(new FakeRegistrar(), 4096, "poller host test");
        // Dispatches like the connection's send-queue path: free the entry, then signal its operation.
        CompletionTarget connection = (p, status, opcode, vendorErr, byteLen, imm, wcFlags) -> {
            Operation op = (Operation) p.operation;
            pending.free(p);
            if (status == 0) {
                op.succeed();
            } else {
                op.fail(new IllegalStateException("status " + status));
            }
        };
        start(source, pending, strategy(idle));

        List<Long> wrIds = new CopyOnWriteArrayList<>();
        Supplier<Mono<Long>> fetchAndAdd = () -> {
            EngineBuffer word = pool.allocatePooled(8);
            word.buffer().order(ByteOrder.nativeOrder()).putLong(0, 1000L + wrIds.size());
            word.retain();
            return TestOperations.fetchAndAdd(word, op -> {
                PendingOperation p = pending.acquire();
                p.connection = connection;
                p.type = OperationType.FETCH_AND_ADD;
                p.operation = op;
                wrIds.add(p.wrId());
            });
        };
        StepVerifier a = StepVerifier.create(fetchAndAdd.get()).expectNext(1000L).expectComplete().verifyLater();
        StepVerifier b = StepVerifier.create(fetchAndAdd.get())
                .expectErrorMessage("status " + REM_ACCESS_ERR).verifyLater();
        StepVerifier c = StepVerifier.create(fetchAndAdd.get()).expectNext(1002L).expectComplete().verifyLater();
        assertEquals(3, wrIds.size());

        source.deliver(Wc.success(wrIds.get(2), 8), Wc.status(wrIds.get(1), REM_ACCESS_ERR));
        source.deliver(Wc.success(wrIds.get(0), 8));
        a.verify(WAIT);
        b.verify(WAIT);
        c.verify(WAIT);
        assertEquals(0, pending.inUse());
        assertEquals(0, pool.pooledBytesInUse(), "every result word went back to the pool");
        pool.close();
    }

    @Test
    void aBatchIsDeliveredWhollyAndMeasuredAsOneBatch() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(false);
        PendingOperations pending = new PendingOperations(32);
        RecordingTarget target = new RecordingTarget(pending);
        CompletionPoller poller = start(source, pending, strategy("backoff"));
        List<PendingOperation> posted = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            posted.add(target.post(OperationType.SEND, i));
        }
        Wc[] batch = posted.stream().map(p -> Wc.success(p.wrId(), 10)).toArray(Wc[]::new);
        long first = batch[0].wrId();
        long second = batch[1].wrId();
        source.deliver(batch);
        source.deliver(Wc.success(first, 10), Wc.success(second, 10)); // duplicates
        source.awaitPolled();

        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), tags(target), "the batch, in order, once");
        assertEquals(0, pending.inUse());
        assertEquals(2, pending.staleCompletions(), "the duplicates");
        assertEquals(12.0, onPoller(poller, () -> registry.get("rdma.poll.batch").summary().totalAmount()),
                "every polled completion is counted");
        DistributionSummary summary = registry.get("rdma.poll.batch").summary();
        assertEquals(2, summary.count(), "one sample per non-empty poll");
        assertEquals(12, summary.totalAmount());
        assertEquals(10, summary.max());
        assertEquals(2, registry.get("rdma.completions.stale").counter().count());
    }

    @Test
    void staleWrIdIsCountedAndNotDeliveredToTheSlotsNewOperation() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(false);
        PendingOperations pending = new PendingOperations(1); // one slot: reuse is certain
        RecordingTarget oldOwner = new RecordingTarget(pending);
        RecordingTarget newOwner = new RecordingTarget(pending);
        start(source, pending, strategy("backoff"));

        long firstWrId = oldOwner.post(OperationType.WRITE, 1).wrId();
        source.deliver(Wc.success(firstWrId, 0));
        source.awaitPolled();
        assertEquals(List.of(1), tags(oldOwner));

        PendingOperation entry = newOwner.post(OperationType.WRITE, 2);
        assertEquals(2, entry.generation, "same slot, next generation");
        long secondWrId = entry.wrId();

        // Late duplicates of the first completion, and wr_ids from nowhere.
        source.deliver(Wc.success(firstWrId, 0), Wc.status(firstWrId, WR_FLUSH_ERR));
        source.deliver(Wc.success(0x0000_0002_0000_0009L, 0), Wc.success(0x0000_0003_0000_0000L, 0));
        source.awaitPolled();
        assertEquals(List.of(), tags(newOwner), "a stale completion must not reach the slot's new operation");
        assertEquals(List.of(1), tags(oldOwner), "nor its old one, twice");
        assertTrue(entry.inUse);
        assertEquals(2, entry.generation);
        assertEquals(4, pending.staleCompletions());
        assertEquals(4, registry.get("rdma.completions.stale").counter().count());

        source.deliver(Wc.success(secondWrId, 0));
        source.awaitPolled();
        assertEquals(List.of(2), tags(newOwner));
        assertEquals(4, pending.staleCompletions());
    }

    @ParameterizedTest
    @ValueSource(strings = {"backoff", "eventDriven"})
    void aTargetThatThrowsDoesNotEndThePoller(String idle) throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(idle.equals("eventDriven"));
        PendingOperations pending = new PendingOperations(8);
        CompletionTarget broken = (p, status, opcode, vendorErr, byteLen, imm, wcFlags) -> {
            pending.free(p);
            throw new IllegalStateException("a connection's completion handling failed (expected by this test)");
        };
        RecordingTarget healthy = new RecordingTarget(pending);
        CompletionPoller poller = start(source, pending, strategy(idle));

        PendingOperation bad = pending.acquire();
        bad.connection = broken;
        bad.type = OperationType.SEND;
        long goodWrId = healthy.post(OperationType.SEND, 1).wrId();
        source.deliver(Wc.success(bad.wrId(), 0), Wc.success(goodWrId, 0)); // the rest of the batch too
        source.awaitPolled();
        long laterWrId = healthy.post(OperationType.RECEIVE, 2).wrId();
        source.deliver(Wc.success(laterWrId, 0));
        source.awaitPolled();

        assertEquals(List.of(1, 2), tags(healthy), "other connections on the CQ keep getting completions");
        assertTrue(source.pollerThread.isAlive());
        assertTrue(onPoller(poller, poller::inPollerThread), "and tasks still run");
        assertEquals(3.0, onPoller(poller, () -> registry.get("rdma.poll.batch").summary().totalAmount()),
                "every polled completion is counted, the one whose target threw too");
    }

    // ---------------------------------------------------------------------------------------- tasks

    @ParameterizedTest
    @ValueSource(strings = {"busySpin", "backoff", "eventDriven"})
    void tasksRunOnThePollerThreadInOrderAndAFailingTaskDoesNotKillIt(String idle) throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(idle.equals("eventDriven"));
        PendingOperations pending = new PendingOperations(4);
        CompletionPoller poller = start(source, pending, strategy(idle));
        assertFalse(poller.inPollerThread());
        source.awaitPolled();
        Thread pollerThread = source.pollerThread;
        assertNotNull(pollerThread);
        assertEquals("host-test-poller", pollerThread.getName());
        assertTrue(pollerThread.isDaemon());

        List<Integer> order = new CopyOnWriteArrayList<>();
        List<Thread> threads = new CopyOnWriteArrayList<>();
        for (int i = 0; i < 100; i++) {
            int n = i;
            poller.execute(() -> {
                threads.add(Thread.currentThread());
                order.add(n);
                if (n == 50) {
                    throw new IllegalStateException("task 50 fails (expected by this test)");
                }
            });
        }
        assertTrue(onPoller(poller, poller::inPollerThread));
        assertEquals(100, order.size());
        for (int i = 0; i < 100; i++) {
            assertEquals(i, order.get(i));
            assertSame(pollerThread, threads.get(i));
        }
        // Still polling after the failed task.
        RecordingTarget target = new RecordingTarget(pending);
        source.deliver(Wc.success(target.post(OperationType.SEND, 7).wrId(), 1));
        source.awaitPolled();
        assertEquals(List.of(7), tags(target));
        assertTrue(pollerThread.isAlive());
    }

    @Test
    void aTaskWakesASleepingEventDrivenPoller() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(true);
        CountDownLatch asleep = source.nextSleep();
        CompletionPoller poller = start(source, new PendingOperations(4), strategy("eventDriven"));
        assertTrue(asleep.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the idle poller sleeps");
        int wakeupsBefore = source.wakeups.get();

        // The fake sleeps 30 s unless woken: the task only runs in time if execute() wakes the poller.
        CompletableFuture<Boolean> ran = new CompletableFuture<>();
        poller.execute(() -> ran.complete(poller.inPollerThread()));
        assertTrue(ran.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(source.wakeups.get() > wakeupsBefore, "execute() woke the sleeping poller");
        assertEquals(0, source.lostWakeups.get());
    }

    // ----------------------------------------------------------------------------------------- stop

    @ParameterizedTest
    @ValueSource(strings = {"busySpin", "backoff", "eventDriven"})
    void stopEndsTheThreadAndClosesTheSource(String idle) throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(idle.equals("eventDriven"));
        CountDownLatch asleep = source.nextSleep();
        CompletionPoller poller = start(source, new PendingOperations(4), strategy(idle));
        source.awaitPolled();
        if (idle.equals("eventDriven")) {
            assertTrue(asleep.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        }
        Thread t = source.pollerThread;
        assertTrue(t.isAlive());

        running.remove(poller);
        long start = System.nanoTime();
        poller.stop(); // does not wait: callers hold locks the rdma_cm thread needs (a sleeping poller is woken)
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(1), "stop() does not wait for the loop");
        assertTrue(source.closed.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the poller closed its source");
        t.join(WAIT.toMillis());
        assertFalse(t.isAlive(), "the poller thread ended");
        assertEquals(1, source.closes.get(), "closed once, by the poller thread after its loop");
        assertTrue(poller.isStopped());
    }

    /**
     * Work handed over from another thread and still queued must not be overtaken by work started on the
     * poller thread: send(Publisher) submits its first messages from the subscriber's thread and the next
     * ones from the poller (as completions request more), and they must be posted in that order. Seen on rxe
     * as "message 130 expected, got 184" before run() checked the queue.
     */
    @Test
    void workStartedOnThePollerDoesNotOvertakeWorkQueuedBeforeIt() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(false);
        CompletionPoller poller = start(source, new PendingOperations(4), strategy("busySpin"));
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch done = new CountDownLatch(1);
        poller.execute(() -> {
            poller.execute(() -> order.add("queued first"));  // as if handed over by another thread
            poller.run(() -> order.add("started on the poller"));
            poller.execute(done::countDown);
        });
        assertTrue(done.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertEquals(List.of("queued first", "started on the poller"), order);
    }

    /**
     * Defect 8 of the engine-core issue: a backoff poller parked for its longest period was not woken by
     * stop() (nor by a task handed over), so closing its last connection took up to that period.
     */
    @Test
    void aParkedBackoffPollerIsWokenByStopAndByAHandedOverTask() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(false);
        CompletionPoller poller = start(source, new PendingOperations(4),
                PollerIdleStrategy.backoff(1, 1, 1_000_000, TimeUnit.SECONDS.toNanos(30)));
        source.awaitPolled();
        Thread.sleep(300); // long enough to be parked (its periods grow from 1 ms to 30 s)
        long start = System.nanoTime();
        CompletableFuture<Void> ran = new CompletableFuture<>();
        poller.execute(() -> ran.complete(null));
        ran.get(2, TimeUnit.SECONDS);
        Thread.sleep(300);
        running.remove(poller);
        poller.stop();
        assertTrue(source.closed.await(2, TimeUnit.SECONDS), "stopped and closed its CQ at once, not after its park");
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void stopFromThePollerThreadClosesTheSourceAfterTheLoopEndsAndLaterTasksStillRun() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(true);
        CompletionPoller poller = start(source, new PendingOperations(4), strategy("eventDriven"));
        source.awaitPolled();
        Thread t = source.pollerThread;
        running.remove(poller);

        AtomicBoolean laterTaskRan = new AtomicBoolean();
        CompletableFuture<Integer> closesDuringStop = new CompletableFuture<>();
        poller.execute(() -> {
            poller.execute(() -> laterTaskRan.set(true)); // queued before the stop: still runs
            poller.stop();
            closesDuringStop.complete(source.closes.get());
        });
        assertTrue(source.closed.await(WAIT.toSeconds(), TimeUnit.SECONDS), "closed by the closer thread");
        t.join(WAIT.toMillis());
        assertFalse(t.isAlive());
        assertEquals(0, closesDuringStop.get(WAIT.toSeconds(), TimeUnit.SECONDS),
                "not closed under the running loop");
        assertEquals(1, source.closes.get());
        assertTrue(laterTaskRan.get(), "a task queued behind stop() still runs (a release after the close)");
        AtomicBoolean afterEnd = new AtomicBoolean();
        poller.execute(() -> afterEnd.set(true));
        assertTrue(afterEnd.get(), "once the thread ended, a task runs on the caller's thread");
    }

    // --------------------------------------------------------------------------------- event-driven

    @Test
    void eventDrivenPollerNeedsASourceWithEvents() {
        ScriptedCompletionSource noEvents = new ScriptedCompletionSource(false);
        assertThrows(IllegalArgumentException.class, () -> new CompletionPoller("x", noEvents,
                new PendingOperations(1), PollerIdleStrategy.eventDriven(), metrics));
    }

    @Test
    void aCompletionWhileSleepingRaisesAnEventAndIsDelivered() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(true);
        PendingOperations pending = new PendingOperations(4);
        RecordingTarget target = new RecordingTarget(pending);
        CountDownLatch asleep = source.nextSleep();
        start(source, pending, strategy("eventDriven"));
        assertTrue(asleep.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(source.arms.get() >= 1, "armed before sleeping");

        int eventsBefore = source.eventsRaised.get();
        source.deliver(Wc.success(target.post(OperationType.SEND, 5).wrId(), 4));
        source.awaitPolled(); // the fake sleeps 30 s unless an event or wake-up comes
        assertEquals(List.of(5), tags(target));
        assertTrue(source.eventsRaised.get() > eventsBefore, "the armed CQ raised an event");
        assertEquals(0, source.lostWakeups.get());
    }

    @Test
    void aCompletionThatLandsJustBeforeArmingIsNotLost() throws Exception {
        ScriptedCompletionSource source = new ScriptedCompletionSource(true);
        PendingOperations pending = new PendingOperations(4);
        RecordingTarget target = new RecordingTarget(pending);
        CountDownLatch asleep = source.nextSleep();
        CompletionPoller poller = start(source, pending, strategy("eventDriven"));
        assertTrue(asleep.await(WAIT.toSeconds(), TimeUnit.SECONDS));

        long wrId = target.post(OperationType.SEND, 9).wrId();
        int eventsBefore = source.eventsRaised.get();
        CountDownLatch delivered = new CountDownLatch(1);
        // Script: the poller's next arm() finds the completion already in the CQ (it landed after the last
        // poll, before arming), so no event will ever come for it: only the poll after arming can find it.
        source.beforeNextArm = () -> source.deliverWithoutEvent(Wc.success(wrId, 4));
        CountDownLatch sleepsAgain = source.nextSleep();
        poller.execute(delivered::countDown); // wakes the poller: it runs the task, finds nothing, sleeps again

        assertTrue(delivered.await(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(sleepsAgain.await(WAIT.toSeconds(), TimeUnit.SECONDS), "the poller went back to sleep");
        assertNull(source.beforeNextArm, "the scripted race happened");
        // Without the poll after arming, the completion would sit in the CQ while the poller sleeps (30 s here,
        // forever on a quiet real CQ): the fake records that as a lost wake-up.
        assertEquals(0, source.lostWakeups.get(), "the poller slept with a completion in the CQ");
        assertEquals(List.of(9), tags(target));
        assertEquals(eventsBefore, source.eventsRaised.get(), "no event was raised for it");
    }

    // ---------------------------------------------------------------------------------- allocation

    /**
     * Generates completions on the poller thread (taking entries as a connection would) and measures what
     * that thread allocates from the first measured poll to the last.
     */
    static final class GeneratingSource implements CompletionQueue {
        private static volatile Object sink;
        private final com.sun.management.ThreadMXBean threads;
        private final PendingOperations pending;
        private final CompletionTarget target;
        private final OperationType type;
        private final int batch;
        private final int warmup;
        private final int total;
        private int produced;
        private long startBytes;
        volatile long allocatedBytes = -1;
        /** What allocating a 1 MiB array on the same thread measured: proves the probe sees allocations. */
        volatile long calibrationBytes = -1;
        final CountDownLatch done = new CountDownLatch(1);

        GeneratingSource(com.sun.management.ThreadMXBean threads, PendingOperations pending, CompletionTarget target,
                OperationType type, int batch, int warmup, int measured) {
            this.threads = threads;
            this.pending = pending;
            this.target = target;
            this.type = type;
            this.batch = batch;
            this.warmup = warmup;
            this.total = warmup + measured;
        }

        static com.sun.management.ThreadMXBean threadMXBean() {
            assumeTrue(ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean,
                    "needs com.sun.management.ThreadMXBean");
            com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            assumeTrue(threads.isThreadAllocatedMemorySupported(), "thread allocation accounting not supported");
            if (!threads.isThreadAllocatedMemoryEnabled()) {
                threads.setThreadAllocatedMemoryEnabled(true);
            }
            return threads;
        }

        @Override
        public int poll(Handler handler) {
            if (produced >= total) {
                return 0;
            }
            if (produced == warmup) {
                startBytes = threads.getCurrentThreadAllocatedBytes();
            }
            for (int i = 0; i < batch; i++) {
                PendingOperation p = pending.acquire();
                p.connection = target;
                p.type = type;
                p.postedNs = System.nanoTime();
                long wrId = p.wrId();
                handler.onCompletion(wrId, 0, 1, 0, 64, 0, 0);
                if ((i & 7) == 0) {
                    handler.onCompletion(wrId, 0, 1, 0, 64, 0, 0); // a duplicate: the stale path
                }
            }
            produced += batch;
            if (produced == total) {
                allocatedBytes = threads.getCurrentThreadAllocatedBytes() - startBytes;
                long before = threads.getCurrentThreadAllocatedBytes();
                sink = new byte[1 << 20];
                calibrationBytes = threads.getCurrentThreadAllocatedBytes() - before;
                sink = null;
                done.countDown();
            }
            return batch;
        }

        /** Waits for the run and checks that the poller thread allocated (next to) nothing. */
        void assertNoAllocationPerCompletion(int measured) throws InterruptedException {
            assertTrue(done.await(60, TimeUnit.SECONDS), "the generated completions were not polled in 60 s");
            assertTrue(calibrationBytes >= 1 << 20, "the probe measures this thread's allocations: "
                    + calibrationBytes);
            // Allocating even one 16-byte object per completion would be 1.6 MB here.
            assertTrue(allocatedBytes < 64 * 1024, allocatedBytes + " bytes allocated by the poller thread over "
                    + measured + " completions (" + (double) allocatedBytes / measured + " per completion)");
        }

        @Override
        public boolean supportsEvents() {
            return false;
        }

        @Override
        public void arm() {
        }

        @Override
        public boolean await(long timeoutNs) {
            return false;
        }

        @Override
        public void wakeup() {
        }

        @Override
        public void close() {
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void theDutyCycleAllocatesNothingPerCompletion(boolean recordMetrics) throws Exception {
        com.sun.management.ThreadMXBean threads = GeneratingSource.threadMXBean();
        EngineMetrics m = recordMetrics ? metrics : EngineMetrics.NOOP;
        PendingOperations pending = new PendingOperations(64);
        CompletionTarget freeing = (p, status, opcode, vendorErr, byteLen, imm, wcFlags) -> pending.free(p);
        int warmup = 64_000;
        int measured = 100_000;
        GeneratingSource source = new GeneratingSource(threads, pending, freeing, OperationType.WRITE, 32, warmup,
                measured);
        CompletionPoller poller = start(source, pending, strategy("backoff"), m);
        source.assertNoAllocationPerCompletion(measured);
        onPoller(poller, () -> null); // the cycle of the last poll (which records its batch) is over
        assertEquals(0, pending.inUse());
        assertEquals((warmup + measured) / 8, pending.staleCompletions());
        if (recordMetrics) {
            assertEquals((warmup + measured) / 8, registry.get("rdma.completions.stale").counter().count());
            assertEquals((warmup + measured) / 32, registry.get("rdma.poll.batch").summary().count());
        }
    }
}
