package io.reactiverdma.reactive.impl.connection;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A handle that any number of threads may release, racing (the application and a discard hook, say): the
 * first release wins, by a compare-and-set, and every other one does nothing, so what a release hands over
 * happens exactly once. A base class rather than a field's object: the handle is made per message.
 *
 * <p>Model-checked by {@code ReleaseModelCheck} (docs/threading-model.md).
 */
abstract class SingleRelease {
    private static final AtomicIntegerFieldUpdater<SingleRelease> RELEASED =
            AtomicIntegerFieldUpdater.newUpdater(SingleRelease.class, "released");

    volatile int released;

    /** True for the first call only (any thread): the caller then does what the release does. */
    boolean claimRelease() {
        return RELEASED.compareAndSet(this, 0, 1);
    }

    final boolean isReleased() {
        return released != 0;
    }
}
