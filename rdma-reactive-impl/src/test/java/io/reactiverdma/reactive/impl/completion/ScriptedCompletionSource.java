package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Registration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link CompletionQueue} that hands the poller completions a test scripted, batch by batch, and models
 * a CQ's one-shot notification: a completion raises an event only when it arrives while the CQ is armed.
 * It detects a lost wake-up: the poller going to sleep while a completion sits in the queue and no event
 * or wake-up is pending (nothing would ever wake it).
 */
final class ScriptedCompletionSource implements CompletionQueue {
    /** One scripted work completion. */
    record Wc(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags) {
        static Wc success(long wrId, int byteLen) {
            return new Wc(wrId, 0, 0, 0, byteLen, 0, 0);
        }

        static Wc status(long wrId, int status) {
            return new Wc(wrId, status, 0, 0, 0, 0, 0);
        }
    }

    private final boolean events;
    /** Items: Wc[] (one poll's batch) or Runnable (a marker run by the poller thread once reached). */
    private final ConcurrentLinkedQueue<Object> script = new ConcurrentLinkedQueue<>();
    /** Permits: pending events plus wake-ups. */
    private final Semaphore signal = new Semaphore(0);
    /** How long await really blocks, whatever the poller asks (long: a missing wake-up must show). */
    private final long awaitCapNs;
    private boolean armed; // guarded by this

    volatile Thread pollerThread;
    /** Runs inside the next arm(), before the CQ counts as armed (once). */
    volatile Runnable beforeNextArm;
    final AtomicInteger arms = new AtomicInteger();
    final AtomicInteger wakeups = new AtomicInteger();
    final AtomicInteger eventsRaised = new AtomicInteger();
    final AtomicInteger lostWakeups = new AtomicInteger();
    final AtomicInteger closes = new AtomicInteger();
    final CountDownLatch closed = new CountDownLatch(1);
    /** Counted down each time the poller enters await (so a test knows it sleeps). */
    private volatile CountDownLatch sleeping = new CountDownLatch(1);

    ScriptedCompletionSource(boolean events) {
        this(events, TimeUnit.SECONDS.toNanos(30));
    }

    ScriptedCompletionSource(boolean events, long awaitCapNs) {
        this.events = events;
        this.awaitCapNs = awaitCapNs;
    }

    /** A completion batch arrives in the CQ (raising an event if the CQ is armed). Any thread. */
    synchronized void deliver(Wc... batch) {
        script.add(batch.clone());
        raiseEventIfArmed();
    }

    /**
     * A completion batch that lands in the CQ with no event, whatever the arming (what a completion that
     * arrives just before {@code ibv_req_notify_cq} looks like to the poller).
     */
    synchronized void deliverWithoutEvent(Wc... batch) {
        script.add(batch.clone());
    }

    /** The poller runs {@code marker} once it has polled every batch delivered before it. */
    synchronized void marker(Runnable marker) {
        script.add(marker);
        raiseEventIfArmed();
    }

    /** Waits until the poller has handed every batch delivered so far to its handler. */
    void awaitPolled() throws InterruptedException {
        CountDownLatch reached = new CountDownLatch(1);
        marker(reached::countDown);
        if (!reached.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the poller did not poll the scripted completions within 10 s");
        }
    }

    /** A latch released when the poller next enters await. */
    CountDownLatch nextSleep() {
        CountDownLatch l = new CountDownLatch(1);
        sleeping = l;
        return l;
    }

    private void raiseEventIfArmed() {
        if (armed) {
            armed = false;
            eventsRaised.incrementAndGet();
            signal.release();
        }
    }

    @Override
    public int poll(Handler handler) {
        pollerThread = Thread.currentThread();
        Object item;
        while ((item = script.poll()) != null) {
            if (item instanceof Runnable r) {
                r.run();
                continue;
            }
            Wc[] batch = (Wc[]) item;
            for (Wc wc : batch) {
                handler.onCompletion(wc.wrId(), wc.status(), wc.opcode(), wc.vendorErr(), wc.byteLen(), wc.immData(),
                        wc.wcFlags());
            }
            return batch.length;
        }
        return 0;
    }

    @Override
    public boolean supportsEvents() {
        return events;
    }

    @Override
    public void arm() {
        if (!events) {
            throw new AssertionError("arm() on a source without events");
        }
        arms.incrementAndGet();
        Runnable hook = beforeNextArm;
        if (hook != null) {
            beforeNextArm = null;
            hook.run(); // e.g. a completion lands now: the CQ is not armed yet, so it raises no event
        }
        synchronized (this) {
            armed = true;
        }
    }

    @Override
    public boolean await(long timeoutNs) {
        if (!events) {
            throw new AssertionError("await() on a source without events");
        }
        synchronized (this) {
            if (!script.isEmpty() && signal.availablePermits() == 0) {
                lostWakeups.incrementAndGet();
            }
        }
        sleeping.countDown();
        try {
            return signal.tryAcquire(Math.max(awaitCapNs, timeoutNs), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            synchronized (this) {
                armed = false;
            }
        }
    }

    @Override
    public void wakeup() {
        wakeups.incrementAndGet();
        signal.release();
    }

    @Override
    public void close() {
        closes.incrementAndGet();
        closed.countDown();
    }
}
