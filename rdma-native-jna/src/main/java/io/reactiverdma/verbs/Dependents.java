package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeResource;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Resources that must be destroyed before another one although they are not its children: the QPs using a
 * CQ or an SRQ (ibv_destroy_cq / ibv_destroy_srq fail with EBUSY while they exist), the CQs attached to a
 * completion channel, the memory windows bound to an MR. The owner closes them first in its release().
 */
final class Dependents {
    private final NativeResource owner;
    private final Set<NativeResource> set = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<NativeResource> order = new ArrayList<>();

    Dependents(NativeResource owner) {
        this.owner = owner;
    }

    /**
     * Adds {@code r}, or throws {@link io.reactiverdma.natives.ClosedResourceException} when the owner began
     * closing: its {@link #closeAll()} (which runs after the owner refuses use) may have taken its snapshot
     * already and would never close {@code r}.
     */
    synchronized void add(NativeResource r) {
        owner.ensureOpen();
        if (set.add(r)) {
            order.add(r);
        }
    }

    synchronized void remove(NativeResource r) {
        if (set.remove(r)) {
            order.remove(r);
        }
    }

    synchronized boolean isEmpty() {
        return set.isEmpty();
    }

    /** Closes every dependent, newest first; throws the first failure with the others suppressed. */
    void closeAll() {
        List<NativeResource> copy;
        synchronized (this) {
            copy = new ArrayList<>(order);
        }
        RuntimeException failure = null;
        for (int i = copy.size() - 1; i >= 0; i--) {
            try {
                copy.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
