package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.impl.metrics.EngineMetrics;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A {@link BufferPool}'s accounting: the bytes registered now (slabs and user regions: pinned memory) and the
 * idle slabs released so far, counted and reported to every distinct metrics recorder attached (at most
 * {@value #MAX_RECORDERS}: the pool is the device's, shared by connections that may report to different
 * recorders, and a supplier may make one per connection). Any thread (its own monitor, taken last).
 */
final class PoolMetrics {
    /** Distinct metrics recorders the pool reports to: bounded, as a supplier may make one per connection. */
    static final int MAX_RECORDERS = 8;

    private final Map<Object, EngineMetrics> recorders = new IdentityHashMap<>();
    private EngineMetrics[] reportTo = new EngineMetrics[0];
    private long registeredBytes;
    private long slabsReleased;

    /** Registered bytes changed by {@code delta}: counted and reported. */
    synchronized void registered(long delta) {
        registeredBytes += delta;
        for (EngineMetrics m : reportTo) {
            m.registeredMemory(delta);
        }
    }

    /** {@code n} idle slabs were deregistered. */
    synchronized void slabsReleased(int n) {
        slabsReleased += n;
        for (EngineMetrics m : reportTo) {
            m.slabsReleased(n);
        }
    }

    /** Reports to {@code metrics}' recorder from now on, starting with the bytes registered now (once per recorder). */
    synchronized void attach(EngineMetrics metrics) {
        Object id = metrics.recorderIdentity();
        if (id == null || recorders.containsKey(id) || recorders.size() >= MAX_RECORDERS) {
            return;
        }
        recorders.put(id, metrics);
        reportTo = recorders.values().toArray(new EngineMetrics[0]);
        metrics.registeredMemory(registeredBytes);
    }

    synchronized long registeredBytes() {
        return registeredBytes;
    }

    synchronized long slabsReleased() {
        return slabsReleased;
    }
}
