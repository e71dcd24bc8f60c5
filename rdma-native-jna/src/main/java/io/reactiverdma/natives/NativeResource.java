package io.reactiverdma.natives;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Base of every wrapper that owns a native object. Closing is idempotent; a closed resource refuses use
 * with {@link ClosedResourceException} before any native call; closing a parent first closes its live
 * children in reverse creation order (a PD closes its QPs, MRs ... before {@code ibv_dealloc_pd}), so no
 * order of {@code close()} calls leaks a native object or makes rdma-core return EBUSY.
 *
 * <p>Not a lock: a resource must not be closed while another thread is inside a call on it.
 */
public abstract class NativeResource implements AutoCloseable {
    private final String description;
    private final NativeResource parent;
    private final Set<NativeResource> children = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<NativeResource> childOrder = new ArrayList<>();
    private volatile boolean closed;

    protected NativeResource(String description, NativeResource parent) {
        this.description = description;
        this.parent = parent;
        if (parent != null) {
            parent.adopt(this);
        }
    }

    private synchronized void adopt(NativeResource child) {
        ensureOpen();
        children.add(child);
        childOrder.add(child);
    }

    private synchronized void orphan(NativeResource child) {
        if (children.remove(child)) {
            childOrder.remove(child);
        }
    }

    /** Throws {@link ClosedResourceException} naming this resource if it was closed. */
    public final void ensureOpen() {
        if (closed) {
            throw new ClosedResourceException(description);
        }
    }

    public final boolean isClosed() {
        return closed;
    }

    /** What this resource is, for messages: for example {@code "ibv_pd on rxe0"}. */
    public final String description() {
        return description;
    }

    /** The live children, oldest first. */
    public final synchronized List<NativeResource> children() {
        return List.copyOf(childOrder);
    }

    @Override
    public final void close() {
        List<NativeResource> toClose;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toClose = new ArrayList<>(childOrder);
        }
        RuntimeException failure = null;
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        try {
            release();
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        } finally {
            if (parent != null) {
                parent.orphan(this);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Frees the native object. Called exactly once, after every child was closed. */
    protected abstract void release();

    @Override
    public String toString() {
        return description + (closed ? " (closed)" : "");
    }
}
