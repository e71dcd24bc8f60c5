package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.support.EngineLog;

import java.util.ArrayList;

/**
 * The clients of a poller that wait for their peers' credits, re-checked every duty cycle until each says
 * it progressed or is done. Poller thread only (a connection's send queue registers itself while it posts),
 * so a plain list: no allocation once it has grown.
 */
final class CreditWaiters {
    private final String pollerName;
    private final ArrayList<PollerClient> waiters = new ArrayList<>();

    CreditWaiters(String pollerName) {
        this.pollerName = pollerName;
    }

    void add(PollerClient client) {
        if (!waiters.contains(client)) {
            waiters.add(client);
        }
    }

    boolean isEmpty() {
        return waiters.isEmpty();
    }

    void clear() {
        waiters.clear();
    }

    /** Re-reads every waiter's credits; drops those no longer waiting; returns how many progressed. */
    int recheck() {
        int progressed = 0;
        for (int i = waiters.size() - 1; i >= 0; i--) {
            PollerClient w = waiters.get(i);
            int r;
            try {
                r = w.recheckCredits();
            } catch (Throwable t) {
                EngineLog.error("completion poller " + pollerName + ": re-checking credits of " + w + " failed", t);
                r = CompletionPoller.DONE;
            }
            if (r != CompletionPoller.STILL_WAITING) {
                waiters.set(i, waiters.get(waiters.size() - 1));
                waiters.remove(waiters.size() - 1);
            }
            if (r == CompletionPoller.PROGRESSED) {
                progressed++;
            }
        }
        return progressed;
    }
}
