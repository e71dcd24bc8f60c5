package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMetricsRecorder;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.impl.device.FakeRegistrar.FakeRegistration;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idle slabs go back after a burst: the pool deregisters a slab none of whose chunks is held once it has been
 * idle for {@link PoolRelease#idleTime()}, keeps the last {@link PoolRelease#keepIdleBytes()} of idle slabs,
 * never touches a slab with a held chunk, and reports the bytes it has registered. A manual clock and timer:
 * the test decides when time passes and when the pool's timer tasks run.
 */
class BufferPoolReleaseHostTest {
    private static final int SLAB = 4096;
    private static final Duration IDLE = Duration.ofSeconds(30);

    private final FakeRegistrar registrar = new FakeRegistrar();
    private final ManualTimer timer = new ManualTimer();
    private final List<ByteBuffer> discarded = new ArrayList<>();

    /** A clock the test advances and a timer whose tasks run when the clock passes their time. */
    static final class ManualTimer implements BufferPool.Timer {
        private long now = 1_000_000_000L;
        private final List<long[]> due = new ArrayList<>();
        private final List<Runnable> tasks = new ArrayList<>();

        long now() {
            return now;
        }

        @Override
        public synchronized void schedule(Runnable task, long delayNanos) {
            due.add(new long[] {now + delayNanos});
            tasks.add(task);
        }

        /** Moves the clock on and runs every task due by then (and those they schedule, if due). */
        void advance(Duration d) {
            now += d.toNanos();
            boolean ran = true;
            while (ran) {
                ran = false;
                for (int i = 0; i < tasks.size(); i++) {
                    if (due.get(i)[0] <= now) {
                        Runnable t = tasks.remove(i);
                        due.remove(i);
                        t.run();
                        ran = true;
                        break;
                    }
                }
            }
        }

        int pending() {
            return tasks.size();
        }
    }

    private BufferPool pool(long keepIdleBytes) {
        return new BufferPool(registrar, SLAB, "release test", new PoolRelease(IDLE, keepIdleBytes), timer::now, timer,
                discarded::add);
    }

    /** {@code slabs} slabs' worth of 1 KiB buffers. */
    private static List<RegisteredBuffer> burst(BufferPool pool, int slabs) {
        List<RegisteredBuffer> held = new ArrayList<>();
        for (int i = 0; i < slabs * (SLAB / 1024); i++) {
            RegisteredBuffer b = pool.allocate(1000);
            b.buffer().putInt(0, i); // the memory is usable
            held.add(b);
        }
        return held;
    }

    @Test
    void afterABurstIdleSlabsAreDeregisteredOnceTheIdleTimeHasPassedAndANewBurstWorks() {
        BufferPool pool = pool(0);
        long baseline = pool.registeredBytes();
        List<RegisteredBuffer> held = burst(pool, 10);
        assertEquals(baseline + 10L * SLAB, pool.registeredBytes(), "registered during the burst");
        held.forEach(RegisteredBuffer::release);

        timer.advance(IDLE.minusSeconds(1));
        assertEquals(baseline + 10L * SLAB, pool.registeredBytes(), "kept while idle for less than the idle time");
        assertEquals(0, registrar.deregistered());

        timer.advance(Duration.ofSeconds(2));
        assertEquals(baseline, pool.registeredBytes(), "back to the baseline once idle for the idle time");
        assertEquals(10, registrar.deregistered(), "every slab deregistered");
        assertTrue(registrar.registrations().stream().allMatch(r -> r.deregistrations.get() == 1), "exactly once");
        assertEquals(10, pool.slabsReleased());
        assertEquals(0, pool.slabCount());
        assertEquals(0, timer.pending(), "nothing idle: no timer task left");

        List<RegisteredBuffer> again = burst(pool, 3);
        assertEquals(baseline + 3L * SLAB, pool.registeredBytes(), "a new burst registers new slabs");
        assertEquals(13, registrar.registerCalls());
        again.forEach(RegisteredBuffer::release);
        pool.close();
    }

    @Test
    void aHeldBufferKeepsItsSlabRegisteredAndUsable() {
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 3);
        RegisteredBuffer kept = held.remove(5); // in the second slab
        FakeRegistration keptSlab = (FakeRegistration) ((EngineBuffer) kept).registration();
        held.forEach(RegisteredBuffer::release);

        timer.advance(IDLE.plusSeconds(1));
        assertEquals(SLAB, pool.registeredBytes(), "the slab with a held chunk stays");
        assertEquals(0, keptSlab.deregistrations.get(), "never deregistered while a chunk of it is held");
        assertEquals(2, pool.slabsReleased());
        ByteBuffer view = kept.buffer();
        view.putLong(0, 0x1234_5678_9abcL);
        assertEquals(0x1234_5678_9abcL, kept.buffer().getLong(0));

        kept.release();
        timer.advance(IDLE.minusSeconds(1));
        assertEquals(SLAB, pool.registeredBytes(), "idle for less than the idle time since its last chunk came back");
        timer.advance(Duration.ofSeconds(2));
        assertEquals(0, pool.registeredBytes());
        assertEquals(1, keptSlab.deregistrations.get());
        pool.close();
        assertEquals(1, keptSlab.deregistrations.get(), "close does not deregister it again");
    }

    @Test
    void anIdleSlabTakenIntoUseAgainIsNotReleasedAndPartlyUsedSlabsAreFilledFirst() {
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 4);
        held.forEach(RegisteredBuffer::release);
        timer.advance(Duration.ofSeconds(20));
        // Two buffers: both from one slab (the partly used one is filled before another idle one is taken).
        RegisteredBuffer a = pool.allocate(1000);
        RegisteredBuffer b = pool.allocate(1000);
        assertEquals(((EngineBuffer) a).registration(), ((EngineBuffer) b).registration());
        timer.advance(Duration.ofSeconds(15));
        assertEquals(SLAB, pool.registeredBytes(), "the three slabs idle for 35 s went, the one in use stayed");
        assertEquals(3, pool.slabsReleased());
        a.release();
        b.release();
        pool.close();
    }

    @Test
    void theLastIdleSlabsUpToKeepIdleBytesStayRegistered() {
        BufferPool pool = pool(2L * SLAB);
        List<RegisteredBuffer> held = burst(pool, 5);
        held.forEach(RegisteredBuffer::release);
        timer.advance(IDLE.plusSeconds(1));
        assertEquals(2L * SLAB, pool.registeredBytes(), "two idle slabs kept");
        assertEquals(3, pool.slabsReleased());
        Set<Long> before = new HashSet<>();
        for (FakeRegistration r : registrar.registrations()) {
            if (r.deregistrations.get() == 0) {
                before.add(r.address);
            }
        }
        // The kept slabs serve the next allocations without a new registration.
        List<RegisteredBuffer> again = burst(pool, 2);
        assertEquals(5, registrar.registerCalls());
        for (RegisteredBuffer r : again) {
            assertTrue(before.contains(((EngineBuffer) r).registration().address()));
        }
        again.forEach(RegisteredBuffer::release);
        pool.close();
        assertEquals(5, registrar.deregistered());
    }

    @Test
    void aSlabThatCannotBeDeregisteredStaysCountedAndIsRetriedAtClose() {
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 2);
        FakeRegistration failing = (FakeRegistration) ((EngineBuffer) held.get(0)).registration();
        failing.failOnDeregister = new IllegalStateException("ibv_dereg_mr: EINVAL (test)");
        held.forEach(RegisteredBuffer::release);
        timer.advance(IDLE.plusSeconds(1)); // the timer task must not throw
        assertEquals(SLAB, pool.registeredBytes(), "still pinned: counted");
        assertEquals(1, pool.slabsReleased(), "only the one deregistered counts as released");
        failing.failOnDeregister = null;
        pool.close();
        assertEquals(2, failing.deregistrations.get(), "close tries again");
        assertEquals(0, pool.registeredBytes());
    }

    @Test
    void userRegistrationsAreCountedAsRegisteredBytesAndTheMetricFollows() {
        BufferPool pool = pool(0);
        Recorder recorder = new Recorder();
        pool.attachMetrics(new EngineMetrics.Bound(recorder, "fake0", null));
        pool.attachMetrics(new EngineMetrics.Bound(recorder, "fake0", null)); // the same recorder: once
        RegisteredBuffer user = pool.allocateRegistered(1000);
        List<RegisteredBuffer> held = burst(pool, 2);
        assertEquals(1000L + 2 * SLAB, pool.registeredBytes());
        assertEquals(pool.registeredBytes(), recorder.registered.get());
        held.forEach(RegisteredBuffer::release);
        user.release();
        assertEquals(2L * SLAB, recorder.registered.get(), "a user registration goes at its release");
        timer.advance(IDLE.plusSeconds(1));
        assertEquals(0, recorder.registered.get());
        assertEquals(2, recorder.released.get());

        // A recorder attached later starts from what is registered then.
        RegisteredBuffer one = pool.allocate(64);
        Recorder late = new Recorder();
        pool.attachMetrics(new EngineMetrics.Bound(late, "fake0", null));
        assertEquals(SLAB, late.registered.get());
        one.release();
        pool.close();
        assertEquals(0, late.registered.get());
        assertEquals(0, recorder.registered.get());
    }

    /**
     * Deregistering unpins a slab, but its direct buffer is freed only when the GC collects it (measured on
     * the loopback engine: direct memory stayed at its peak after the burst). So its pages are discarded,
     * after the deregistration, and the next slab reuses the memory instead of allocating more.
     */
    @Test
    void aReleasedSlabsPagesAreDiscardedAfterItsDeregistrationAndItsMemoryIsReused() {
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 2);
        List<ByteBuffer> slabMemory = new ArrayList<>();
        for (FakeRegistration r : registrar.registrations()) {
            slabMemory.add(r.buffer);
        }
        held.forEach(RegisteredBuffer::release);
        timer.advance(IDLE.plusSeconds(1));
        assertEquals(2, discarded.size(), "both slabs' pages discarded");
        for (ByteBuffer m : slabMemory) {
            assertTrue(discarded.stream().anyMatch(d -> d == m));
        }
        List<RegisteredBuffer> again = burst(pool, 1);
        ByteBuffer reused = registrar.last().buffer;
        assertTrue(slabMemory.stream().anyMatch(m -> m == reused), "the next slab reuses discarded memory");
        again.forEach(RegisteredBuffer::release);
        pool.close();
    }

    @Test
    void aSlabThatCannotBeDeregisteredKeepsItsPages() {
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 1);
        ((FakeRegistration) ((EngineBuffer) held.get(0)).registration()).failOnDeregister =
                new IllegalStateException("ibv_dereg_mr: EINVAL (test)");
        held.forEach(RegisteredBuffer::release);
        timer.advance(IDLE.plusSeconds(1));
        assertEquals(List.of(), discarded, "the device may still map it: not discarded");
    }

    @Test
    void oneRunDeregistersABoundedNumberOfSlabsAndComesBackForTheRest() {
        BufferPool pool = pool(0);
        int slabs = BufferPool.MAX_RELEASED_PER_RUN + 4;
        burst(pool, slabs).forEach(RegisteredBuffer::release);
        timer.advance(IDLE.plusSeconds(1)); // runs the first run and, due at once, the next
        assertEquals(slabs, pool.slabsReleased());
        assertEquals(0, pool.registeredBytes());
        pool.close();
    }

    /** Close waits for a release run that is deregistering: the protection domain is freed after it only. */
    @Test
    void closeWaitsForAReleaseRunThatIsDeregistering() throws Exception {
        java.util.concurrent.CountDownLatch inside = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch proceed = new java.util.concurrent.CountDownLatch(1);
        BufferPool pool = pool(0);
        List<RegisteredBuffer> held = burst(pool, 2);
        FakeRegistration slow = (FakeRegistration) ((EngineBuffer) held.get(0)).registration();
        held.forEach(RegisteredBuffer::release);
        slow.onDeregister = () -> {
            inside.countDown();
            try {
                proceed.await(10, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        Thread release = new Thread(() -> timer.advance(IDLE.plusSeconds(1)));
        release.start();
        assertTrue(inside.await(10, java.util.concurrent.TimeUnit.SECONDS));
        Thread closing = new Thread(pool::close);
        closing.start();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (closing.getState() != Thread.State.BLOCKED && closing.getState() != Thread.State.TERMINATED
                && System.nanoTime() - deadline < 0) {
            Thread.onSpinWait();
        }
        assertEquals(Thread.State.BLOCKED, closing.getState(), "close must wait for the deregistration under way");
        proceed.countDown();
        closing.join(10_000);
        assertEquals(Thread.State.TERMINATED, closing.getState());
        release.join(10_000);
        assertEquals(0, pool.registeredBytes());
        assertTrue(registrar.registrations().stream().allMatch(r -> r.deregistrations.get() == 1), "each once");
    }

    @Test
    void aTimerTaskAfterCloseDoesNothing() {
        BufferPool pool = pool(0);
        burst(pool, 1).forEach(RegisteredBuffer::release);
        pool.close();
        assertEquals(1, registrar.deregistered());
        timer.advance(IDLE.plusSeconds(1));
        assertEquals(1, registrar.registrations().get(0).deregistrations.get());
    }

    static final class Recorder implements RdmaMetricsRecorder {
        final AtomicLong registered = new AtomicLong();
        final AtomicLong released = new AtomicLong();

        @Override
        public void registeredMemoryChanged(String device, long deltaBytes) {
            registered.addAndGet(deltaBytes);
        }

        @Override
        public void slabsReleased(String device, int count) {
            released.addAndGet(count);
        }

        @Override
        public void recordOperation(String device, InetSocketAddress remote, OperationType op, Outcome outcome,
                long latencyNanos, long bytes) {
        }

        @Override
        public void recordCompletionError(String device, InetSocketAddress remote, String status) {
        }

        @Override
        public void recordPollBatch(String device, int completions) {
        }

        @Override
        public void recordStaleCompletion(String device) {
        }

        @Override
        public void outstandingChanged(String device, InetSocketAddress remote, int delta) {
        }

        @Override
        public void connectionsChanged(String device, InetSocketAddress remote, int delta) {
        }

        @Override
        public void creditsWaitingChanged(String device, InetSocketAddress remote, int delta) {
        }
    }
}
