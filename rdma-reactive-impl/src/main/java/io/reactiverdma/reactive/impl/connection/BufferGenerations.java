package io.reactiverdma.reactive.impl.connection;

/**
 * The generation of each receive buffer of a queue, stamped on the handle of every message that lands in
 * it: a buffer is taken back only from a handle of its current generation, and each give-back moves the
 * generation on, so a handle kept after its release, or a second give-back of the same message from inside
 * the engine, fails loudly instead of reposting a buffer that holds the next message.
 *
 * <p>Poller thread only (no lock): the handles' own release (any thread, {@link SingleRelease}) reaches it
 * through the poller's hand-over. Model-checked with them by {@code ReleaseModelCheck}
 * (docs/threading-model.md).
 */
final class BufferGenerations {
    private final String description;
    private final int[] generations;

    BufferGenerations(String description, int buffers) {
        this.description = description;
        this.generations = new int[buffers];
    }

    /** The generation to stamp on a message landing in buffer {@code index} now. */
    int current(int index) {
        return generations[index];
    }

    /**
     * Buffer {@code index} came back from a message of {@code generation}: accepted only when that is the
     * buffer's current generation, which then moves on (every handle of it is stale from now on).
     *
     * @throws IllegalStateException for a stale generation: the buffer was given back already
     */
    void giveBack(int index, int generation) {
        if (generations[index] != generation) {
            throw new IllegalStateException(description + ": receive buffer " + index + " came back from generation "
                    + generation + " but is at " + generations[index] + " (released twice inside the engine)");
        }
        generations[index]++;
    }
}
