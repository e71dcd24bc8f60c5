package io.reactiverdma.samples.bulk;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of chunk buffers a receiver's transfers hold together: a HELLO takes its ring's bytes before
 * anything is registered, and gives them back when its transfer ends, so no number of senders can make the
 * receiver pin more than the limit.
 */
final class PinnedBudget {
    private final long limit;
    private final AtomicLong taken = new AtomicLong();

    PinnedBudget(long limit) {
        this.limit = limit;
    }

    /** Takes {@code bytes} if they fit; false (nothing taken) when they do not. */
    boolean tryTake(long bytes) {
        long now;
        do {
            now = taken.get();
            if (now + bytes > limit) {
                return false;
            }
        } while (!taken.compareAndSet(now, now + bytes));
        return true;
    }

    void giveBack(long bytes) {
        taken.addAndGet(-bytes);
    }

    long taken() {
        return taken.get();
    }

    long limit() {
        return limit;
    }
}
