package io.reactiverdma.reactive.impl.connection;

/**
 * The handshake between a streaming send's producer (upstream's onNext, any thread) and the poller thread
 * that gives the staging area back to the pool: a racing onNext never writes into a staging area that is
 * already back in the pool (and perhaps someone else's), and the area still goes back once that onNext has
 * left.
 *
 * <p>Dekker-style: the producer writes {@link #producing} and then reads {@link #closed}; the poller writes
 * {@link #closed} and then reads {@link #producing}. Both are volatile, so at least one side sees the
 * other's write: the producer sees the close and writes nothing, or the poller sees the producer inside and
 * leaves the release to it ({@link #leave()} answers true: the producer asks the poller to try again).
 *
 * <p>Model-checked by {@code StagingGateModelCheck} (docs/threading-model.md).
 */
class StagingGate {
    /** 1 while a producer may be writing into the staging area. */
    volatile int producing;
    /** Set by the poller once the stream terminated: nothing may be written any more. */
    volatile boolean closed;

    /**
     * Producer, before it writes: returns whether it may write. {@link #leave()} must follow either way.
     */
    boolean enter() {
        producing = 1;
        return !closed;
    }

    /**
     * Producer, after writing (or not): returns true when the area was closed meanwhile, so the poller may
     * have left its release to this thread (ask it to {@link #close()} again).
     */
    boolean leave() {
        producing = 0;
        return closed;
    }

    /**
     * Poller thread: no producer may write from now on. Returns true when none is writing now, so the area
     * may go back to the pool (once nothing posted from it is outstanding either). Idempotent.
     */
    boolean close() {
        closed = true;
        return producing == 0;
    }

}
