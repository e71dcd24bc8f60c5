package io.reactiverdma.reactive.impl.datagram;

import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * An endpoint's unicast destinations (peers it sends to, senders it replies to), at most {@code capacity} of
 * them: both kinds of key are chosen by peers or by traffic (every new sender QP is one more), and each
 * entry holds an address handle, a kernel object the device has a limited number of. Beyond the capacity
 * the least recently used entry is evicted and retired (destroyed once no send holds it); whoever needs it
 * again makes a new one. Any thread: the map is guarded by this object's lock, held briefly and never
 * around a native call.
 */
final class AddressHandleCache {
    private final int capacity;
    private final EngineMetrics metrics;
    private final LinkedHashMap<Object, Destination> entries = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    AddressHandleCache(int capacity, EngineMetrics metrics) {
        this.capacity = capacity;
        this.metrics = metrics;
    }

    /** The destination cached for {@code key}, held for one send, or null (absent, or retired meanwhile). */
    Destination hold(Object key) {
        synchronized (this) {
            Destination d = entries.get(key);
            return d != null && d.hold() ? d : null;
        }
    }

    /**
     * Caches {@code d} for {@code key}: a destination it replaces and those evicted beyond the capacity are
     * retired. False (and {@code d} retired) once the cache is closed.
     */
    boolean put(Object key, Destination d) {
        List<Destination> gone = new ArrayList<>(2);
        int evicted = 0;
        boolean kept;
        synchronized (this) {
            kept = !closed;
            if (kept) {
                Destination old = entries.put(key, d);
                if (old != null && old != d) {
                    gone.add(old);
                }
                for (Iterator<Destination> it = entries.values().iterator(); entries.size() > capacity; evicted++) {
                    gone.add(it.next());
                    it.remove();
                }
            } else {
                gone.add(d);
            }
        }
        for (int i = 0; i < evicted; i++) {
            metrics.addressHandleEvicted();
        }
        gone.forEach(Destination::retire);
        return kept;
    }

    /** Forgets {@code d} if it is still what {@code key} names, and retires it. */
    void remove(Object key, Destination d) {
        synchronized (this) {
            entries.remove(key, d);
        }
        d.retire();
    }

    /** The endpoint closes: every destination is retired, and later ones are refused. */
    void close() {
        List<Destination> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(entries.values());
            entries.clear();
        }
        all.forEach(Destination::retire);
    }
}
