package io.reactiverdma.reactive.impl.completion;

import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Model check (Lincheck's data-structure mode: bounded model checking of generated scenarios, each result
 * checked for linearizability against a FIFO queue) of the poller's intrusive hand-off queue,
 * {@link HandOffQueue}, on its own: up to three threads push (tasks that are their own node, and plain
 * {@link Runnable}s in a node of their own) while one of them (the single consumer: {@code poll} and
 * {@code isEmpty} share a non-parallel group) takes; every pushed task comes out once, in the order of the
 * pushes, and an empty poll only when nothing was pushed and not taken. And no operation ever waits for
 * another thread (Lincheck's obstruction-freedom check: no lock, no spin on another thread's progress).
 *
 * <p>Four broken variants (test-only overrides of the queue's push and take), each asserted to fail, keep the
 * check honest: a push without the CAS (a lost task), a push that publishes the node before linking it (the
 * consumer takes a node whose link is not set: the tasks under it are lost), a take that reads the stack and
 * then clears it instead of swapping (a push in between is lost), a push under a lock (correct results, but a
 * producer can block another).
 *
 * <p>Why not {@code Lincheck.runConcurrentTest} as the other model checks: with a block of threads around
 * this queue, Lincheck 3.7 passed the CAS-less push over 20,000 interleavings (docs/threading-model.md).
 */
@Tag("model-check")
class HandOffQueueModelCheck {

    @Test
    void everyTaskPushedByRacingProducersComesOutOnceInPushOrder() {
        options(Ops.class).check(Ops.class);
    }

    @Test
    void theCheckFindsALostTaskWhenThePushWritesTheTopWithoutACas() {
        assertFindsBug(LostPush.class);
    }

    @Test
    void theCheckFindsLostTasksWhenThePushPublishesTheNodeBeforeLinkingIt() {
        assertFindsBug(PublishedBeforeLinked.class);
    }

    @Test
    void theCheckFindsALostTaskWhenTheConsumerReadsAndClearsTheStackInsteadOfSwapping() {
        assertFindsBug(ReadThenClearTake.class);
    }

    @Test
    void theCheckFindsAProducerBlockedWhenThePushTakesALock() {
        assertFindsBug(LockedPush.class);
    }

    private static ModelCheckingOptions options(Class<?> ops) {
        return new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(0)
                .actorsAfter(3)
                .iterations(Integer.getInteger("reactiverdma.modelcheck.iterations", 20))
                .invocationsPerIteration(ModelChecks.INVOCATIONS)
                .sequentialSpecification(FifoQueue.class)
                .checkObstructionFreedom(true);
    }

    private static void assertFindsBug(Class<? extends Ops> broken) {
        AssertionError found = assertThrows(AssertionError.class, () -> options(broken).check(broken),
                "the model check passed a deliberately broken queue (" + broken.getSimpleName()
                        + "): it cannot find this bug");
        System.out.println("[model check] the broken queue " + broken.getSimpleName() + " failed as it must:\n"
                + found.getMessage());
    }

    /** The queue's operations as Lincheck calls them; pushed tasks carry a value so results can be compared. */
    public static class Ops {
        private final HandOffQueue queue;

        public Ops() {
            this(new HandOffQueue());
        }

        Ops(HandOffQueue queue) {
            this.queue = queue;
        }

        /** A task that is its own node (the engine's operations). */
        @Operation
        public void offer(int value) {
            queue.offer(new Node(value));
        }

        /** A plain task, wrapped in a node of its own. */
        @Operation
        public void offerPlain(int value) {
            queue.offer(new Plain(value));
        }

        @Operation(nonParallelGroup = "consumer")
        public Integer poll() {
            Runnable r = queue.poll();
            return r == null ? null : ((Valued) r).value();
        }

        @Operation(nonParallelGroup = "consumer")
        public boolean isEmpty() {
            return queue.isEmpty();
        }
    }

    /** The specification: a FIFO queue. */
    public static class FifoQueue {
        private final ArrayDeque<Integer> values = new ArrayDeque<>();

        public void offer(int value) {
            values.add(value);
        }

        public void offerPlain(int value) {
            values.add(value);
        }

        public Integer poll() {
            return values.poll();
        }

        public boolean isEmpty() {
            return values.isEmpty();
        }
    }

    /** Broken: reads the top, links, writes the top back (no CAS): two racing pushes lose one. */
    public static class LostPush extends Ops {
        public LostPush() {
            super(pushWithoutCas());
        }
    }

    /** Broken: publishes the node with the CAS, then links it: a take in between sees no link. */
    public static class PublishedBeforeLinked extends Ops {
        public PublishedBeforeLinked() {
            super(pushPublishingBeforeLinking());
        }
    }

    /** Broken: the consumer reads the stack, then clears it: a push in between is dropped. */
    public static class ReadThenClearTake extends Ops {
        public ReadThenClearTake() {
            super(takeReadingThenClearing());
        }
    }

    /** Broken (correct results, but no longer lock-free): a push under a lock blocks a racing push. */
    public static class LockedPush extends Ops {
        public LockedPush() {
            super(new HandOffQueue() {
                @Override
                synchronized void push(HandOffTask node) {
                    node.nextTask = stack;
                    stack = node;
                }
            });
        }
    }

    /** A broken queue whose push reads the top, links and writes the top back without a CAS. */
    static HandOffQueue pushWithoutCas() {
        return new HandOffQueue() {
            @Override
            void push(HandOffTask node) {
                HandOffTask top = stack;
                node.nextTask = top;
                stack = node;
            }
        };
    }

    /** A broken queue whose push publishes the node with its CAS, then links it. */
    static HandOffQueue pushPublishingBeforeLinking() {
        return new HandOffQueue() {
            @Override
            void push(HandOffTask node) {
                HandOffTask top;
                do {
                    top = stack;
                } while (!casStack(this, top, node));
                node.nextTask = top;
            }
        };
    }

    /** A broken queue whose consumer reads the stack, then clears it. */
    static HandOffQueue takeReadingThenClearing() {
        return new HandOffQueue() {
            @Override
            HandOffTask detachStack() {
                HandOffTask t = stack;
                stack = null;
                return t;
            }
        };
    }

    private static final AtomicReferenceFieldUpdater<HandOffQueue, HandOffTask> STACK =
            AtomicReferenceFieldUpdater.newUpdater(HandOffQueue.class, HandOffTask.class, "stack");

    private static boolean casStack(HandOffQueue q, HandOffTask expect, HandOffTask update) {
        return STACK.compareAndSet(q, expect, update);
    }

    private interface Valued {
        int value();
    }

    private static final class Node extends HandOffTask implements Valued {
        private final int value;

        Node(int value) {
            this.value = value;
        }

        @Override
        public int value() {
            return value;
        }

        @Override
        public void run() {
        }
    }

    private static final class Plain implements Runnable, Valued {
        private final int value;

        Plain(int value) {
            this.value = value;
        }

        @Override
        public int value() {
            return value;
        }

        @Override
        public void run() {
        }
    }
}
