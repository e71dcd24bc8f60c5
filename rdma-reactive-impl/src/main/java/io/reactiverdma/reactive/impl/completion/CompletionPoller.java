package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineThread;

import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.impl.verbs.CompletionQueue;

import java.util.ArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The agent that owns one completion queue and every connection on it: the only thread that polls the CQ
 * and the only thread that reads or writes those connections' state. Other threads hand it work through
 * {@link #execute}; work submitted from the poller thread itself runs inline (callers check
 * {@link #inPollerThread()}).
 *
 * <p>Its duty cycle is {@link #doWork()}: poll a batch, run handed-over tasks, re-read the credit words of
 * connections waiting for credits, then let every connection that has work ready post it, as one chained
 * post per connection (doorbell batching: what one cycle's completions and tasks made ready goes to the
 * device in one {@code ibv_post_send}); it returns the work done, and the idle strategy decides what to do with
 * zero. Event-driven idling ({@link EventDrivenIdle}) first polls a bounded number of cycles more (the
 * completion of what was just posted usually arrives then, and needs no wake-up), then arms the CQ, polls
 * once more (a completion between the last poll and the arming raises no event) and sleeps on the
 * completion channel until an event or a {@link #execute wake-up}.
 *
 * <p><b>Supervision.</b> Any {@code Throwable} out of poll, arm or await (the device was disassociated,
 * {@code ibv_poll_cq} failed, the CQ overflowed) ends polling for good: the poller marks itself
 * {@link #failure() failed} (its CQ takes no new connections), tells every {@link PollerClient} on its
 * thread, and then keeps running tasks only, so their close sequences still complete, until {@link #stop}.
 * A failing task or completion handler is logged and does not end the thread.
 *
 * <p>Dispatching a completion allocates nothing: the CQ polls into a reused flyweight, the handler is
 * this object, and pending entries are preallocated (a received message then gets its own small handle,
 * see {@link EngineMessage}).
 */
public final class CompletionPoller implements CompletionQueue.Handler {
    /** {@link PollerClient#recheckCredits()} answers. */
    public static final int STILL_WAITING = 0;
    public static final int PROGRESSED = 1;
    public static final int DONE = 2;
    /** Longest sleep of an event-driven poller without events: a safety net, not a mechanism. */
    static final long MAX_SLEEP_NS = TimeUnit.SECONDS.toNanos(1);
    /** Sleep between task checks once the CQ failed (tasks wake it earlier). */
    private static final long FAILED_PARK_NS = TimeUnit.MILLISECONDS.toNanos(50);

    private final String name;
    private final CompletionQueue cq;
    private final PendingOperations pending;
    /** Never null: {@link EventDrivenIdle}, {@link IdleStrategy.BusySpin} or {@link IdleStrategy.Backoff}. */
    private final IdleStrategy idle;
    /** While some connection waits for credits, the poller re-reads credit words instead of sleeping. */
    private final IdleStrategy creditWaitIdle = new IdleStrategy.Backoff(20, 5, 1_000, 100_000);
    private final EngineMetrics metrics;
    /** Work handed over by other threads (and, once the thread ended, run on theirs). */
    private final TaskHandOff tasks;
    private final CreditWaiters creditWaiters;
    /** Clients with work ready to post at the end of this cycle (poller-thread only). */
    private final ArrayList<PollerClient> flushes = new ArrayList<>();
    private final AttachedClients clients;
    private final Thread thread;
    private volatile boolean running = true;
    /** The event-driven sleep and its wake-up (null for a spinning strategy). */
    private final EventSleep eventSleep;
    /** Set while a spinning strategy idles (it may park): only then does a hand-over pay for an unpark. */
    private volatile boolean idling;
    private volatile Throwable failure;

    CompletionPoller(String name, CompletionQueue cq, PendingOperations pending, PollerIdleStrategy strategy,
            EngineMetrics metrics) {
        this.name = name;
        this.cq = cq;
        this.pending = pending;
        boolean eventDriven = strategy.kind() == PollerIdleStrategy.Kind.EVENT_DRIVEN;
        if (eventDriven && !cq.supportsEvents()) {
            throw new IllegalArgumentException("an event-driven poller needs a CQ with a completion channel");
        }
        this.metrics = metrics;
        this.tasks = new TaskHandOff(name);
        this.creditWaiters = new CreditWaiters(name);
        this.clients = new AttachedClients(name);
        this.eventSleep = eventDriven ? new EventSleep(new SleepChannel(), MAX_SLEEP_NS) : null;
        this.idle = eventDriven ? new EventDrivenIdle(strategy.maxSpins(), eventSleep) : IdleStrategy.of(strategy);
        this.thread = new EngineThread(this::run, name);
    }

    void start() {
        thread.start();
    }

    public String name() {
        return name;
    }

    PendingOperations pending() {
        return pending;
    }

    /** Whether the caller is this poller's thread. */
    public boolean inPollerThread() {
        return Thread.currentThread() == thread;
    }

    /**
     * Whether the calling thread may touch the state this poller's clients own: it is the poller thread, or
     * the poller has ended and the caller runs a task handed over since (one at a time, in order: see
     * {@link TaskHandOff}). What the owner-thread assertions check.
     */
    public boolean ownsCurrentThread() {
        return Thread.currentThread() == thread || tasks.runningOnCaller();
    }

    /** Why polling stopped, or null while it runs. */
    public Throwable failure() {
        return failure;
    }

    /** Runs {@code task} on the poller thread, after the tasks handed over before it (wakes it if it sleeps). */
    public void execute(Runnable task) {
        // Once the thread has ended the task runs here, one caller at a time, in order (a message released
        // after its connection closed still reaches its receive queue): see TaskHandOff.
        if (tasks.offer(task)) {
            wake();
        }
    }

    /**
     * Runs {@code task} now when called on the poller thread with nothing handed over still waiting, else
     * hands it over. Work queued before it is never overtaken: send(Publisher) submits its first messages
     * from the subscriber's thread and the next ones from this thread, and they must be posted in order.
     */
    public void run(Runnable task) {
        if (inPollerThread() && tasks.isEmpty()) {
            task.run();
        } else {
            execute(task);
        }
    }

    /** {@code client} is owned by this poller from now on (told if polling fails). Any thread. */
    public void attach(PollerClient client) {
        clients.add(client);
        Throwable f = failure;
        if (f != null) {
            execute(() -> client.pollerFailed(f));
        }
    }

    public void detach(PollerClient client) {
        clients.remove(client);
    }

    /**
     * {@code client} has work ready to post: its {@link PollerClient#flush()} runs at the end of this duty
     * cycle (once, however often it was requested: the client keeps its own flag). Poller thread only.
     */
    public void requestFlush(PollerClient client) {
        flushes.add(client);
    }

    /**
     * {@code client} waits for credits: re-check it every cycle until it says otherwise. Poller thread only
     * (a connection's send queue registers itself while it posts), so it is a plain list: no allocation.
     */
    public void awaitCredits(PollerClient client) {
        creditWaiters.add(client);
    }

    /**
     * Poller thread: polls until the CQ is empty, so that every completion it holds now is handled (before a
     * QP on a shared receive queue is destroyed: mlx providers drop a destroyed QP's unpolled completions).
     */
    public void pollUntilEmpty() {
        boolean more = true;
        while (more && failure == null) {
            more = poll() > 0;
        }
    }

    /** Polls one batch and records it; returns how many completions were handled. */
    private int poll() {
        int n = cq.poll(this);
        if (n > 0) {
            metrics.pollBatch(n);
        }
        return n;
    }

    /**
     * Ends polling as if the CQ had failed with {@code cause} (an asynchronous CQ error event): the clients
     * are failed on the poller thread. Any thread; idempotent.
     */
    public void fail(Throwable cause) {
        execute(() -> failPolling(cause));
    }

    private void wake() {
        if (eventSleep != null && eventSleep.wake()) {
            return;
        }
        if (idling || failure != null || !running) {
            LockSupport.unpark(thread); // a backoff or failed poller may be parked
        }
    }

    /** One duty cycle: returns the work done (completions, tasks, connections that could post again). */
    int doWork() {
        int work = 0;
        if (failure == null) {
            work += poll();
        }
        work += tasks.runAll();
        if (failure == null) {
            work += creditWaiters.recheck();
        }
        work += flushClients();
        return work;
    }

    /**
     * Lets every client that has work ready post it, each as one chain. A flush may make more ready (a
     * stream's upstream answering a request on this thread): such a client is added again and flushed in
     * the same pass.
     */
    private int flushClients() {
        int posted = 0;
        for (int i = 0; i < flushes.size(); i++) {
            PollerClient c = flushes.get(i);
            try {
                posted += c.flush();
            } catch (Throwable t) {
                EngineLog.error("completion poller " + name + ": posting the work of " + c + " failed", t);
            }
        }
        flushes.clear();
        return posted;
    }

    private void run() {
        try {
            while (running) {
                try {
                    int work = doWork();
                    if (failure != null) {
                        if (work == 0) {
                            LockSupport.parkNanos(this, FAILED_PARK_NS);
                        }
                        continue;
                    }
                    idle(work);
                } catch (Throwable t) {
                    failPolling(t);
                }
            }
        } finally {
            closeCq();
            tasks.terminate();
        }
    }

    private void idle(int work) {
        if (work > 0) {
            idle.reset();
            creditWaitIdle.reset();
        } else if (eventSleep != null && creditWaiters.isEmpty()) {
            idle.idle(0); // spins, or sleeps on the completion channel: never parks
        } else {
            idling = true;
            try {
                if (tasks.isEmpty()) { // a task handed over before 'idling' was set saw no reason to unpark
                    (creditWaiters.isEmpty() ? idle : creditWaitIdle).idle(0);
                }
            } finally {
                idling = false;
            }
        }
    }

    /** The CQ and this poller as {@link EventSleep} sees them. */
    private final class SleepChannel implements EventSleep.Channel {
        @Override
        public void arm() {
            cq.arm();
        }

        @Override
        public int poll() {
            return CompletionPoller.this.poll();
        }

        @Override
        public boolean hasWork() {
            return !tasks.isEmpty() || !flushes.isEmpty() || !running;
        }

        @Override
        public void await(long timeoutNs) {
            cq.await(timeoutNs);
        }

        @Override
        public void wakeup() {
            cq.wakeup();
        }
    }

    /** Poller thread: polling is over; every client learns why and closes on this thread. */
    private void failPolling(Throwable cause) {
        if (failure != null) {
            return;
        }
        failure = cause;
        creditWaiters.clear();
        clients.failAll(cause);
    }

    @Override
    public void onCompletion(long wrId, int status, int opcode, int vendorErr, int byteLen, int immData, int wcFlags) {
        onCompletion(-1, wrId, status, opcode, vendorErr, byteLen, immData, wcFlags);
    }

    @Override
    public void onCompletion(int qpNum, long wrId, int status, int opcode, int vendorErr, int byteLen, int immData,
            int wcFlags) {
        PendingOperation e = pending.lookup(wrId);
        if (e == null) {
            metrics.staleCompletion();
            return;
        }
        CompletionTarget target = e.connection;
        try {
            target.onCompletion(e, qpNum, status, opcode, vendorErr, byteLen, immData, wcFlags);
        } catch (Throwable t) {
            // One connection's failure (or a subscriber that threw from onNext) must not end the thread that
            // every other connection on this CQ depends on.
            EngineLog.error("completion poller " + name + ": handling the completion of wr_id 0x"
                    + Long.toHexString(wrId) + " failed; failing its connection", t);
            target.completionHandlingFailed(e, wrId, t);
        }
    }

    /**
     * Stops the thread without waiting for it: the poller closes its CQ itself once its loop has returned
     * (every QP on the CQ was destroyed before). Any thread; idempotent.
     */
    void stop() {
        running = false;
        wake();
        LockSupport.unpark(thread);
    }

    /**
     * Waits at most {@code timeoutMs} for the thread to end (after {@link #stop()}); true when it did. On the
     * poller thread itself (a close that completes there) it cannot wait for itself: true, since the thread ends
     * once the current task returns and closes its CQ then (a close racing that one waits for it).
     */
    boolean awaitStopped(long timeoutMs) {
        if (Thread.currentThread() == thread) {
            return true;
        }
        if (thread.getState() == Thread.State.NEW) {
            return true;
        }
        try {
            thread.join(timeoutMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    /** True once the thread has ended (and closed its CQ). */
    boolean isStopped() {
        return !thread.isAlive() && thread.getState() != Thread.State.NEW;
    }

    private void closeCq() {
        try {
            cq.close();
        } catch (Throwable t) {
            EngineLog.error("completion poller " + name + ": destroying its CQ failed", t);
        }
    }
}
