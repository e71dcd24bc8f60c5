package io.reactiverdma.reactive.impl.loopback;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Live resources of a loopback stack (or of one of its devices), for leak assertions: every object the
 * engine creates is counted from creation to destruction, with a description, so a failed assertion lists
 * what is left. Thread-safe.
 */
public final class LoopbackResources {
    /** What is counted. */
    public enum Kind {
        CM_CHANNEL, CM_ID, QUEUE_PAIR, COMPLETION_QUEUE, PROTECTION_DOMAIN, REGISTRATION, MEMORY_WINDOW, SHARED_RECEIVE_QUEUE,
        /** Work requests posted and not completed yet (send and receive). */
        OUTSTANDING_WR
    }

    private final String scope;
    private final LoopbackResources parent;
    private final Map<Kind, Map<Object, String>> live = new ConcurrentHashMap<>();
    private final AtomicLong registeredBytes = new AtomicLong();
    private final AtomicLong outstanding = new AtomicLong();

    LoopbackResources(String scope, LoopbackResources parent) {
        this.scope = scope;
        this.parent = parent;
        for (Kind k : Kind.values()) {
            live.put(k, new ConcurrentHashMap<>());
        }
    }

    void add(Kind kind, Object o, String description) {
        live.get(kind).put(o, description);
        if (parent != null) {
            parent.add(kind, o, description);
        }
    }

    /** True when {@code o} was live (so a second destroy is recognised and harmless). */
    boolean remove(Kind kind, Object o) {
        boolean was = live.get(kind).remove(o) != null;
        if (parent != null) {
            parent.remove(kind, o);
        }
        return was;
    }

    void bytes(long delta) {
        registeredBytes.addAndGet(delta);
        if (parent != null) {
            parent.bytes(delta);
        }
    }

    void outstanding(long delta) {
        outstanding.addAndGet(delta);
        if (parent != null) {
            parent.outstanding(delta);
        }
    }

    /** Live objects of {@code kind} (for OUTSTANDING_WR: work requests posted and not completed). */
    public long count(Kind kind) {
        return kind == Kind.OUTSTANDING_WR ? outstanding.get() : live.get(kind).size();
    }

    /** Bytes of the live registrations. */
    public long registeredBytes() {
        return registeredBytes.get();
    }

    /** The live objects of {@code kind} themselves (for tests that look into one). */
    public List<Object> objects(Kind kind) {
        return new ArrayList<>(live.get(kind).keySet());
    }

    /** Descriptions of the live objects of {@code kind}. */
    public List<String> describe(Kind kind) {
        return new ArrayList<>(live.get(kind).values());
    }

    /** One line per kind with live objects; empty when nothing is left. */
    public String leftOver(Set<Kind> ignored) {
        StringBuilder sb = new StringBuilder();
        for (Kind k : Kind.values()) {
            if (ignored.contains(k) || count(k) == 0) {
                continue;
            }
            sb.append(k).append(": ").append(count(k));
            if (k != Kind.OUTSTANDING_WR) {
                sb.append(' ').append(describe(k));
            }
            if (k == Kind.REGISTRATION) {
                sb.append(" (").append(registeredBytes()).append(" bytes)");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    /**
     * Waits (polling, at most {@code timeout}) until nothing but the {@code ignored} kinds is live; otherwise
     * throws an {@link AssertionError} listing what is left.
     */
    public void awaitReleased(Duration timeout, Kind... ignored) {
        Set<Kind> skip = ignored.length == 0 ? EnumSet.noneOf(Kind.class) : EnumSet.of(ignored[0], ignored);
        long deadline = System.nanoTime() + timeout.toNanos();
        String left;
        while (!(left = leftOver(skip)).isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(scope + ": resources still live after " + timeout + ":\n" + left);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for " + scope + " to release its resources");
            }
        }
    }

    @Override
    public String toString() {
        String left = leftOver(EnumSet.noneOf(Kind.class));
        return scope + (left.isEmpty() ? ": nothing live" : ":\n" + left);
    }
}
