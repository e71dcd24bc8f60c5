package io.reactiverdma.natives;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Base of every wrapper that owns a native object. Closing is idempotent; a closed resource refuses use
 * with {@link ClosedResourceException} before any native call; closing a parent first closes its live
 * children in reverse creation order (a PD closes its QPs, MRs ... before {@code ibv_dealloc_pd}), so no
 * order of {@code close()} calls leaks a native object or makes rdma-core return EBUSY.
 *
 * <p><b>The call guard.</b> Every native call on the object runs between {@link #beginCall()} and
 * {@link #endCall()}; {@link #close()} first refuses new calls, then waits until the calls in progress have
 * left, and only then frees the native object. So any thread may close a resource while others use it: a
 * call either completes before the release or fails with {@link ClosedResourceException}; none reaches a
 * freed object (rxe unmaps a QP's rings in {@code ibv_destroy_qp}: a post racing it would write into freed
 * memory). Entering and leaving cost one atomic add each and allocate nothing. A call that may block (a
 * wait on a file descriptor) must be bounded, or woken by {@link #onClosing()}, since a close waits for it.
 * Closing a resource from inside a call on it, on the same thread, would wait for itself: nothing here does.
 *
 * <p><b>Close.</b> The first {@code close()} does the work; a concurrent {@code close()} on another thread
 * returns only once that work is over, so a returned {@code close()} always means "released" (or threw).
 * When freeing fails (a child that cannot be freed, {@code ibv_dereg_mr} refused while a window is bound),
 * the resource stays open, listed under its parent and usable, {@code close()} throws the typed failure and
 * may be retried; it is kept strongly reachable meanwhile ({@link #unreleased()}), so memory that a live
 * registration pins is never given back to the allocator.
 */
public abstract class NativeResource implements AutoCloseable {
    /** Bit of {@link #calls} set while closing or closed: new calls are refused. */
    private static final int CLOSING = 1 << 30;
    private static final VarHandle CALLS;
    /** Resources whose release failed: their native object still exists, so they must stay reachable. */
    private static final Set<NativeResource> UNRELEASED = ConcurrentHashMap.newKeySet();

    static {
        try {
            CALLS = MethodHandles.lookup().findVarHandle(NativeResource.class, "calls", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String description;
    private final NativeResource parent;
    private final Set<NativeResource> children = Collections.newSetFromMap(new IdentityHashMap<>());
    private final List<NativeResource> childOrder = new ArrayList<>();
    /** Calls in progress, plus {@link #CLOSING}. */
    @SuppressWarnings("unused") // through CALLS
    private volatile int calls;
    /** The thread doing the close (under this monitor); null when none is. */
    private Thread closer;
    /** The native object was freed. */
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

    /** Throws {@link ClosedResourceException} naming this resource if it was closed or is being closed. */
    public final void ensureOpen() {
        if (((int) CALLS.getVolatile(this) & CLOSING) != 0) {
            throw new ClosedResourceException(description);
        }
    }

    /**
     * Enters a native call on this object: refused with {@link ClosedResourceException} once a close began;
     * otherwise the object is not freed until the matching {@link #endCall()}. Always pair them in
     * try/finally. One atomic add; allocates nothing.
     */
    protected final void beginCall() {
        int before = (int) CALLS.getAndAdd(this, 1);
        if ((before & CLOSING) != 0) {
            endCall();
            throw new ClosedResourceException(description);
        }
    }

    /** Leaves a call entered with {@link #beginCall()}; wakes a close waiting for it. */
    protected final void endCall() {
        int before = (int) CALLS.getAndAdd(this, -1);
        if (before == CLOSING + 1) {
            Thread c;
            synchronized (this) {
                c = closer;
            }
            if (c != null) {
                LockSupport.unpark(c);
            }
        }
    }

    /** True once closing began (calls are refused) or finished. */
    public final boolean isClosed() {
        return closed || ((int) CALLS.getVolatile(this) & CLOSING) != 0;
    }

    /** What this resource is, for messages: for example {@code "ibv_pd on rxe0"}. */
    public final String description() {
        return description;
    }

    /** The live children, oldest first. */
    public final synchronized List<NativeResource> children() {
        return List.copyOf(childOrder);
    }

    /** Resources whose release failed and that were not closed since: their native objects still exist. */
    public static List<NativeResource> unreleased() {
        return List.copyOf(UNRELEASED);
    }

    @Override
    public final void close() {
        List<NativeResource> toClose;
        synchronized (this) {
            while (true) {
                if (closed) {
                    return;
                }
                if (closer == null) {
                    break;
                }
                if (closer == Thread.currentThread()) {
                    return; // a release that reaches back to its own resource: already being closed
                }
                try {
                    wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new ClosedResourceException(description + " (interrupted while another thread closed it)");
                }
            }
            closer = Thread.currentThread();
            CALLS.getAndBitwiseOr(this, CLOSING);
            toClose = new ArrayList<>(childOrder);
        }
        RuntimeException failure = null;
        boolean released = false;
        try {
            onClosing();
            awaitCallsLeft();
            for (int i = toClose.size() - 1; i >= 0; i--) {
                try {
                    toClose.get(i).close();
                } catch (RuntimeException e) {
                    failure = add(failure, e);
                }
            }
            if (failure == null) { // a live child would make the release fail (EBUSY) or free it under the child
                release();
                released = true;
            }
        } catch (RuntimeException | Error e) {
            failure = e instanceof RuntimeException r ? add(failure, r) : failure;
            if (e instanceof Error err) {
                finish(false);
                throw err;
            }
        }
        finish(released);
        if (failure != null) {
            throw failure;
        }
    }

    private void finish(boolean released) {
        synchronized (this) {
            if (released) {
                closed = true;
            } else {
                CALLS.getAndBitwiseAnd(this, ~CLOSING); // still holds its native object: usable, retriable
            }
            closer = null;
            notifyAll();
        }
        if (released) {
            UNRELEASED.remove(this);
            if (parent != null) {
                parent.orphan(this);
            }
        } else {
            UNRELEASED.add(this);
        }
    }

    private static RuntimeException add(RuntimeException failure, RuntimeException e) {
        if (failure == null) {
            return e;
        }
        failure.addSuppressed(e);
        return failure;
    }

    private void awaitCallsLeft() {
        boolean interrupted = false;
        while (((int) CALLS.getVolatile(this) & ~CLOSING) != 0) {
            // endCall() unparks; the timeout only covers a wake-up that raced the park
            LockSupport.parkNanos(this, 1_000_000L);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * For a constructor that fails after this resource was adopted by its parent: unlists it and marks it
     * closed without a release (whoever created the native object destroys it, see {@link #wrapOrDestroy}).
     */
    protected final void abandon() {
        synchronized (this) {
            CALLS.getAndBitwiseOr(this, CLOSING);
            closed = true;
        }
        if (parent != null) {
            parent.orphan(this);
        }
    }

    /**
     * Wraps a native object that was just created: when the wrapper cannot be made (its parent began closing
     * meanwhile, so the adoption is refused), {@code destroy} frees the native object before the failure is
     * thrown, so nothing leaks. Creators run the native create inside a call on the parent.
     */
    protected static <T> T wrapOrDestroy(Supplier<T> wrap, Runnable destroy) {
        try {
            return wrap.get();
        } catch (RuntimeException | Error e) {
            try {
                destroy.run();
            } catch (RuntimeException d) {
                e.addSuppressed(d);
            }
            throw e;
        }
    }

    /**
     * Called once new calls are refused and before waiting for those in progress: a resource whose calls may
     * block (a wait on a file descriptor) wakes them here. Must not call {@link #beginCall()}.
     */
    protected void onClosing() {
    }

    /** Frees the native object. Called after every child was closed, once per successful close. */
    protected abstract void release();

    @Override
    public String toString() {
        return description + (closed ? " (closed)" : "");
    }
}
