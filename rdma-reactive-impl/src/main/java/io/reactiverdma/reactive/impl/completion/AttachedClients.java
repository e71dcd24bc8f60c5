package io.reactiverdma.reactive.impl.completion;

import io.reactiverdma.reactive.impl.support.EngineLog;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The clients a poller owns (attached from any thread), and telling each of them, on the poller thread,
 * that polling failed: one client whose handling throws does not keep the others from hearing it.
 */
final class AttachedClients {
    private final String pollerName;
    private final Set<PollerClient> clients = ConcurrentHashMap.newKeySet();

    AttachedClients(String pollerName) {
        this.pollerName = pollerName;
    }

    void add(PollerClient client) {
        clients.add(client);
    }

    void remove(PollerClient client) {
        clients.remove(client);
    }

    /** Poller thread: tells every client attached now that polling ended with {@code cause}. */
    void failAll(Throwable cause) {
        EngineLog.error("completion poller " + pollerName + " failed; failing its " + clients.size()
                + " connections (its tasks still run)", cause);
        for (PollerClient c : clients.toArray(PollerClient[]::new)) {
            try {
                c.pollerFailed(cause);
            } catch (Throwable t) {
                EngineLog.error("completion poller " + pollerName + ": failing " + c + " failed", t);
            }
        }
    }
}
