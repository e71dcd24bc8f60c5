package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.verbs.CompletionQueue;
import io.reactiverdma.reactive.impl.verbs.Registration;
import io.reactiverdma.reactive.PollerIdleStrategy;

import java.util.ArrayList;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The one thread that polls one completion queue and resolves each completion's pending operation by its
 * {@code wr_id}. Its duty cycle: poll a batch, run tasks handed to it, re-check connections that wait for
 * flow-control credits; then idle by the configured strategy. Event-driven idling arms the CQ, polls once
 * more (a completion that landed between the last poll and the arming raises no event) and only then
 * sleeps on the completion channel, until an event or a {@link #execute wake-up}.
 *
 * <p>Nothing in the cycle allocates per completion: the source polls into a reused flyweight, the handler
 * is this object, and pending entries are preallocated.
 */
final class CompletionPoller implements CompletionQueue.Handler {
    /** Longest sleep of an event-driven poller without events: a safety net, not a mechanism. */
    static final long MAX_SLEEP_NS = TimeUnit.SECONDS.toNanos(1);

    private final String name;
    private final CompletionQueue source;
    private final PendingOperations pending;
    private final boolean eventDriven;
    private final IdleStrategy idle;
    /** While some connection waits for credits, the poller re-reads credit words instead of sleeping. */
    private final IdleStrategy creditWaitIdle = new IdleStrategy.Backoff(20, 5, 1_000, 100_000);
    private final EngineMetrics metrics;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Queue<EngineConnection> newCreditWaiters = new ConcurrentLinkedQueue<>();
    /** Poller-thread only. */
    private final ArrayList<EngineConnection> creditWaiters = new ArrayList<>();
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running = true;
    private volatile boolean sleeping;
    private long completions;

    CompletionPoller(String name, CompletionQueue source, PendingOperations pending, PollerIdleStrategy strategy,
            EngineMetrics metrics) {
        this.name = name;
        this.source = source;
        this.pending = pending;
        this.eventDriven = strategy.kind() == PollerIdleStrategy.Kind.EVENT_DRIVEN;
        if (eventDriven && !source.supportsEvents()) {
            throw new IllegalArgumentException("an event-driven poller needs a source with a completion channel");
        }
        this.idle = eventDriven ? null : IdleStrategy.of(strategy);
        this.metrics = metrics;
        this.thread = new EngineThread(this::run, name);
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    String name() {
        return name;
    }

    PendingOperations pending() {
        return pending;
    }

    boolean inPollerThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs {@code task} on the poller thread (soon; wakes it if it sleeps). */
    void execute(Runnable task) {
        tasks.offer(task);
        wakeIfSleeping();
    }

    /** {@code connection} waits for credits: re-check it every cycle until it says it is done. */
    void awaitCredits(EngineConnection connection) {
        newCreditWaiters.offer(connection);
        wakeIfSleeping();
    }

    private void wakeIfSleeping() {
        if (sleeping) {
            source.wakeup();
        }
    }

    /** Completions handled so far (poller thread's count; approximate from other threads). */
    long completions() {
        return completions;
    }

    private void run() {
        try {
            while (running) {
                int work = source.poll(this);
                if (work > 0) {
                    completions += work;
                    metrics.pollBatch(work);
                }
                work += runTasks();
                work += checkCreditWaiters();
                if (work > 0) {
                    if (idle != null) {
                        idle.reset();
                    }
                    creditWaitIdle.reset();
                    continue;
                }
                if (!creditWaiters.isEmpty()) {
                    creditWaitIdle.idle(0);
                } else if (eventDriven) {
                    sleep();
                } else {
                    idle.idle(0);
                }
            }
        } catch (Throwable t) {
            EngineLog.error("completion poller " + name + " died", t);
        } finally {
            stopped.countDown();
        }
    }

    private void sleep() {
        sleeping = true;
        try {
            source.arm();
            // Poll once more after arming: a completion that arrived before the arm raises no event.
            int n = source.poll(this);
            if (n > 0) {
                completions += n;
                metrics.pollBatch(n);
                return;
            }
            if (!tasks.isEmpty() || !newCreditWaiters.isEmpty() || !running) {
                return;
            }
            source.await(MAX_SLEEP_NS);
        } finally {
            sleeping = false;
        }
    }

    private int runTasks() {
        int n = 0;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (Throwable t) {
                EngineLog.error("task on completion poller " + name + " failed", t);
            }
            n++;
        }
        return n;
    }

    private int checkCreditWaiters() {
        EngineConnection c;
        while ((c = newCreditWaiters.poll()) != null) {
            if (!creditWaiters.contains(c)) {
                creditWaiters.add(c);
            }
        }
        int progressed = 0;
        for (int i = creditWaiters.size() - 1; i >= 0; i--) {
            EngineConnection w = creditWaiters.get(i);
            int r;
            try {
                r = w.recheckCredits();
            } catch (Throwable t) {
                EngineLog.error("completion poller " + name + ": re-checking credits of " + w + " failed", t);
                r = EngineConnection.DONE;
            }
            if (r != EngineConnection.STILL_WAITING) {
                creditWaiters.set(i, creditWaiters.get(creditWaiters.size() - 1));
                creditWaiters.remove(creditWaiters.size() - 1);
            }
            if (r == EngineConnection.PROGRESSED) {
                progressed++;
            }
        }
        return progressed;
    }

    @Override
    public void onCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags) {
        PendingOperation e = pending.lookup(wrId);
        if (e == null) {
            metrics.staleCompletion();
            return;
        }
        CompletionTarget target = e.connection;
        Operation op = e.operation; // the target frees the entry first: keep what to fail if it then throws
        try {
            target.onCompletion(e, status, opcode, vendorErr, byteLen, immData, wcFlags);
        } catch (Throwable t) {
            // One connection's failure (or a subscriber that threw from onNext) must not end the thread that
            // every other connection on this CQ depends on.
            EngineLog.error("completion poller " + name + ": handling the completion of wr_id 0x"
                    + Long.toHexString(wrId) + " failed; closing its connection", t);
            pending.freeIfCurrent(e, wrId); // if the target threw before freeing it
            if (op != null) { // fails it unless it was signalled already (then holds are already dropped)
                op.fail(new io.reactiverdma.reactive.RdmaException("handling the completion failed: " + t, t));
            }
            if (target instanceof EngineConnection c) {
                c.close(new io.reactiverdma.reactive.RdmaException(c + ": handling a completion failed: " + t, t));
            }
        }
    }

    /**
     * Stops the thread, waits for it (unless called on it) and closes the source. Pending operations
     * must have been drained by their connections first.
     */
    void stop() {
        running = false;
        source.wakeup();
        if (!inPollerThread()) {
            try {
                if (!stopped.await(10, TimeUnit.SECONDS)) {
                    EngineLog.error("completion poller " + name + " did not stop within 10 s", null);
                    return; // do not free a CQ a live thread polls
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            source.close();
        } else {
            // Closing from the poller itself: free the source once the loop has returned.
            tasks.clear();
            Thread closer = new Thread(() -> {
                try {
                    stopped.await();
                    source.close();
                } catch (InterruptedException ignored) {
                    Thread.currentThread().interrupt();
                }
            }, name + "-close");
            closer.setDaemon(true);
            closer.start();
        }
    }
}
