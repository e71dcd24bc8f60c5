package io.reactiverdma.reactive.impl;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** What a tracer would see: every observation started and stopped, in order (thread-safe). */
final class RecordingObservationHandler implements ObservationHandler<Observation.Context> {
    final List<Observation.Context> started = new CopyOnWriteArrayList<>();
    final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

    @Override
    public void onStart(Observation.Context context) {
        started.add(context);
    }

    @Override
    public void onStop(Observation.Context context) {
        stopped.add(context);
    }

    @Override
    public boolean supportsContext(Observation.Context context) {
        return true;
    }

    /** The one stopped observation named {@code name}. */
    Observation.Context stoppedNamed(String name) {
        List<Observation.Context> found = stopped.stream().filter(c -> name.equals(c.getName())).toList();
        if (found.size() != 1) {
            throw new AssertionError("expected one stopped " + name + ", got " + found + " (all: " + stopped + ")");
        }
        return found.get(0);
    }
}
