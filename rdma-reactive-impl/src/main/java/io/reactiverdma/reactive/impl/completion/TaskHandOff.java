package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.support.EngineLog;

import java.util.Queue;

/**
 * The hand-over of work from any thread to a poller thread, and its end: while the poller runs, it alone
 * runs the tasks (in the order they were handed over); once it has {@link #terminate() terminated}, a task
 * handed over runs on the caller's thread, under this object's lock, after every task handed over before
 * it. Either way every task runs exactly once and no two run at the same time: a connection's state stays
 * confined to one thread at a time even after its poller ended (a message released after its connection
 * closed still reaches the receive queue).
 *
 * <p>Lock-free on the poller's side while it runs (a multi-producer queue, which after the end sees one
 * consumer at a time: the lock's holder); the lock is taken only after
 * termination. Model-checked by {@code TaskHandOffModelCheck} (docs/threading-model.md).
 */
class TaskHandOff {
    private final String name;
    final Queue<Runnable> tasks;
    /** The poller has ended: tasks handed over from now on run on the caller's thread. */
    volatile boolean terminated;

    /** A poller's hand-over: an intrusive multi-producer, single-consumer queue ({@link HandOffQueue}). */
    TaskHandOff(String name) {
        this(name, new HandOffQueue());
    }

    /** {@code tasks} must take offers from any thread and polls from one thread at a time. */
    TaskHandOff(String name, Queue<Runnable> tasks) {
        this.name = name;
        this.tasks = tasks;
    }

    /**
     * Hands {@code task} over (any thread). Returns true when the poller still runs and will run it (the
     * caller wakes it); false when the poller has ended and the task already ran here.
     */
    boolean offer(Runnable task) {
        tasks.offer(task);
        if (terminated) {
            // Nobody owns the poller's connections any more (all closed): what still arrives runs here,
            // one caller at a time, in order.
            synchronized (tasks) {
                runAll();
            }
            return false;
        }
        return true;
    }

    /** Whether the caller runs a task handed over after the poller ended (under this hand-off's lock). */
    boolean runningOnCaller() {
        return terminated && Thread.holdsLock(tasks);
    }

    /** Nothing handed over waits (approximate from other threads). */
    boolean isEmpty() {
        return tasks.isEmpty();
    }

    /** Poller thread, while it runs: runs every task handed over so far; returns how many ran. */
    int runAll() {
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

    /**
     * Poller thread, as its last act: runs what is queued, then lets callers run their tasks themselves.
     * A task queued before a caller could see {@link #terminated} is run by the final pass, under the lock.
     */
    void terminate() {
        runAll();
        terminated = true;
        synchronized (tasks) {
            runAll();
        }
    }
}
