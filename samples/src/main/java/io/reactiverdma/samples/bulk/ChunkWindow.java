package io.reactiverdma.samples.bulk;

/**
 * The accounting of a ring of {@code size} chunk slots shared by sender and receiver: a slot is in flight
 * from the moment its chunk is handed to the peer (written, or announced for reading) until the peer says it
 * is consumed. It refuses to put a slot in flight twice or one outside the ring, so at most {@code size}
 * chunks are ever in flight, and it records the most there were. Thread-safe.
 */
public final class ChunkWindow {
    private final boolean[] inFlight;
    private int count;
    private int maxCount;
    private long issued;
    private long completed;

    public ChunkWindow(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("size must be >= 1, got " + size);
        }
        this.inFlight = new boolean[size];
    }

    public int size() {
        return inFlight.length;
    }

    /**
     * Puts {@code slot} in flight.
     *
     * @throws IllegalStateException when the slot is outside the ring or already in flight
     */
    public synchronized void issue(int slot) {
        checkSlot(slot);
        if (inFlight[slot]) {
            throw new IllegalStateException("slot " + slot + " is already in flight");
        }
        inFlight[slot] = true;
        count++;
        issued++;
        maxCount = Math.max(maxCount, count);
    }

    /**
     * Ends {@code slot}'s flight; returns false (and changes nothing) when it was not in flight.
     *
     * @throws IllegalStateException when the slot is outside the ring
     */
    public synchronized boolean complete(int slot) {
        checkSlot(slot);
        if (!inFlight[slot]) {
            return false;
        }
        inFlight[slot] = false;
        count--;
        completed++;
        return true;
    }

    /** Whether {@code slot} lies in the ring. */
    public boolean contains(int slot) {
        return slot >= 0 && slot < inFlight.length;
    }

    public synchronized int inFlight() {
        return count;
    }

    /** The most slots that were in flight at once so far. */
    public synchronized int maxInFlight() {
        return maxCount;
    }

    public synchronized long issued() {
        return issued;
    }

    public synchronized long completed() {
        return completed;
    }

    private void checkSlot(int slot) {
        if (!contains(slot)) {
            throw new IllegalStateException("slot " + slot + " is outside the ring of " + inFlight.length);
        }
    }
}
