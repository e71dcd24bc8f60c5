package io.reactiverdma.reactive.impl.completion;

import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * The poller's multi-producer, single-consumer hand-off queue, intrusive: a {@link HandOffTask} is its own
 * node, so handing one over allocates nothing (Reactor's linked MPSC queue allocated a 24-byte node per
 * hand-over: one per {@code send} Mono). Producers push onto a lock-free stack with one CAS; the consumer
 * takes the whole stack with one swap and reverses it into a private batch, so tasks run in the order they
 * were pushed (the CAS order), and those of one producer in its order. Plain {@link Runnable}s are wrapped in
 * a node each.
 *
 * <p>{@link #offer} from any thread; {@link #poll} and {@link #isEmpty} from one consumer at a time (the
 * poller thread, or after its end the caller holding the hand-off's lock: {@link TaskHandOff}), which is
 * what makes the private batch safe. {@link #size} and iteration are not supported. Model-checked on its own
 * by {@code HandOffQueueModelCheck} (racing pushes and the consumer, linearizable as a FIFO queue; three
 * broken variants asserted to fail) and inside the hand-off by {@code TaskHandOffModelCheck}
 * (docs/threading-model.md); stress-tested under four racing producers by {@code HandOffQueueHostTest}.
 */
class HandOffQueue extends AbstractQueue<Runnable> {
    private static final AtomicReferenceFieldUpdater<HandOffQueue, HandOffTask> STACK =
            AtomicReferenceFieldUpdater.newUpdater(HandOffQueue.class, HandOffTask.class, "stack");

    /** Pushed and not yet taken, newest first (package-private for the model check's broken variants). */
    volatile HandOffTask stack;
    /** Taken from the stack, oldest first (the consumer's only). */
    private HandOffTask batch;

    @Override
    public boolean offer(Runnable task) {
        push(task instanceof HandOffTask t ? t : new Wrapped(task));
        return true;
    }

    /**
     * Links {@code node} to the top, then publishes it with one CAS (retried when another producer pushed
     * in between): the link is written before the node is visible, so the consumer never sees a node whose
     * link is not yet set. Overridden only by the model check's broken variants ({@code HandOffQueueModelCheck}).
     */
    void push(HandOffTask node) {
        HandOffTask top;
        do {
            top = stack;
            node.nextTask = top;
        } while (!STACK.compareAndSet(this, top, node));
    }

    @Override
    public Runnable poll() {
        HandOffTask t = batch;
        if (t == null) {
            t = takeStack();
            if (t == null) {
                return null;
            }
        }
        batch = t.nextTask;
        t.nextTask = null; // the task may be handed over again once it runs
        return t instanceof Wrapped w ? w.task : t;
    }

    /** Takes the whole stack and returns it reversed (oldest first); null when it was empty. */
    private HandOffTask takeStack() {
        HandOffTask t = detachStack();
        HandOffTask reversed = null;
        while (t != null) {
            HandOffTask next = t.nextTask;
            t.nextTask = reversed;
            reversed = t;
            t = next;
        }
        return reversed;
    }

    /**
     * Takes the whole stack, newest first, with one swap: a push racing it lands either in what this returns
     * or on the emptied stack, never in neither. Overridden only by the model check's broken variants.
     */
    HandOffTask detachStack() {
        // The poller asks every duty cycle, mostly of an empty stack: a plain volatile read spares it the
        // locked swap then (a push after the read is taken by the next call).
        return stack == null ? null : STACK.getAndSet(this, null);
    }

    @Override
    public Runnable peek() {
        throw new UnsupportedOperationException();
    }

    /** Nothing waits: exact on the consumer, approximate elsewhere. */
    @Override
    public boolean isEmpty() {
        return batch == null && stack == null;
    }

    @Override
    public int size() {
        throw new UnsupportedOperationException();
    }

    @Override
    public Iterator<Runnable> iterator() {
        throw new UnsupportedOperationException();
    }

    /** A plain {@link Runnable}'s node. */
    private static final class Wrapped extends HandOffTask {
        final Runnable task;

        Wrapped(Runnable task) {
            this.task = task;
        }

        @Override
        public void run() {
            task.run();
        }
    }
}
