package io.reactiverdma.reactive.impl.support;

import reactor.core.scheduler.Scheduler;
import reactor.util.annotation.Nullable;

import java.util.concurrent.RejectedExecutionException;

/**
 * One subscription's deliveries on a worker of the application's callback scheduler, in order, and what
 * happens when that scheduler refuses them: the application disposed it while the subscription was live.
 * A refused delivery is not run: the caller gives its value back (a message's buffer is released, not lost)
 * and ends the subscription with {@link #refusal()}, signalled on the calling thread since the worker runs
 * nothing any more. Without this, the refusal escaped into the poller's task loop: the subscriber waited for
 * ever, the message's buffer was lost, and a datagram endpoint could no longer close.
 *
 * <p>Not thread-safe: the owner's poller thread calls it.
 */
public final class CallbackWorker {
    private final Scheduler.Worker worker;
    @Nullable
    private RejectedExecutionException refusal;

    private CallbackWorker(Scheduler.Worker worker) {
        this.worker = worker;
    }

    /** A worker of {@code callbacks}, or null without a callback scheduler (deliveries on the caller's thread). */
    @Nullable
    public static CallbackWorker of(@Nullable Scheduler callbacks) {
        return callbacks == null ? null : new CallbackWorker(callbacks.createWorker());
    }

    /** Hands {@code task} to the worker, after the ones before it; false when the scheduler refused it. */
    public boolean schedule(Runnable task) {
        if (refusal != null) {
            return false;
        }
        try {
            worker.schedule(task);
            return true;
        } catch (RejectedExecutionException e) {
            refusal = e;
            return false;
        }
    }

    /** Why the last {@link #schedule} was refused (null until one was). */
    @Nullable
    public RejectedExecutionException refusal() {
        return refusal;
    }

    /** Disposes the worker once the deliveries already handed to it ran, or now if its scheduler refuses that. */
    public void disposeAfterDeliveries() {
        if (!schedule(worker::dispose)) {
            worker.dispose();
        }
    }

    /** Runs {@code signal} on the worker after its deliveries and disposes it there, or both here if refused. */
    public void endWith(Runnable signal) {
        if (!schedule(() -> {
            signal.run();
            worker.dispose();
        })) {
            signal.run();
            worker.dispose();
        }
    }
}
