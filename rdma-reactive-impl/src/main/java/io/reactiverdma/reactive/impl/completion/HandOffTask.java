package io.reactiverdma.reactive.impl.completion;

/**
 * A task that is its own node in a poller's hand-off queue ({@link HandOffQueue}): handing it to the poller
 * allocates nothing. A task must not be handed over again before it started running (its link is in use
 * until then); the engine's own tasks ({@code Operation}, handed over once; {@code StreamingSend}, guarded by
 * its scheduled flag) keep to that. Any other {@link Runnable} is wrapped in a node of its own.
 */
public abstract class HandOffTask implements Runnable {
    /** The next task of the hand-off queue: written by the producer before it publishes this task. */
    HandOffTask nextTask;
}
