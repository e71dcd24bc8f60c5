package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link BufferPool}'s user registrations: memory regions of the user's own direct buffers (or of new ones,
 * {@code allocateRegistered}) with exactly the remote access asked for, each checked before anything is
 * registered, counted in the pool's {@link PoolMetrics}, and deregistered once (by its release, or by the
 * pool's close). Any thread: registration (slow: it pins every page) runs outside this monitor.
 */
final class UserRegions {
    private final BufferPool pool;
    private final BufferPool.Registrar registrar;
    private final PoolMetrics metrics;
    private final Set<UserRegistration> live = Collections.newSetFromMap(new IdentityHashMap<>());
    private boolean closed;

    UserRegions(BufferPool pool, BufferPool.Registrar registrar, PoolMetrics metrics) {
        this.pool = pool;
        this.registrar = registrar;
        this.metrics = metrics;
    }

    /** See {@link io.reactiverdma.reactive.RdmaMemory#register}. */
    RegisteredBuffer register(ByteBuffer directBuffer, RemoteAccess... remoteAccess) {
        Objects.requireNonNull(directBuffer, "directBuffer");
        Objects.requireNonNull(remoteAccess, "remoteAccess");
        if (!directBuffer.isDirect()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "only a direct ByteBuffer can be registered (heap memory moves): use ByteBuffer.allocateDirect");
        }
        if (directBuffer.isReadOnly()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "a read-only buffer cannot be registered");
        }
        if (!directBuffer.hasRemaining()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "the buffer has no bytes between its position and limit");
        }
        EnumSet<RemoteAccess> access = EnumSet.noneOf(RemoteAccess.class);
        for (RemoteAccess a : remoteAccess) {
            access.add(Objects.requireNonNull(a, "remoteAccess element"));
        }
        ByteBuffer view = directBuffer.slice().order(ByteOrder.nativeOrder());
        synchronized (this) {
            ensureOpen();
        }
        // Outside the monitor: ibv_reg_mr of a large region takes long.
        Registration r;
        try {
            r = registrar.register(view, access);
        } catch (RuntimeException e) {
            throw new RdmaException("cannot register " + view.capacity() + " bytes with " + access + " on "
                    + pool.description() + ": " + e.getMessage(), e);
        }
        UserRegistration u = new UserRegistration(pool, view, r, Collections.unmodifiableSet(access));
        synchronized (this) {
            if (closed) {
                r.deregister(); // closed meanwhile: nothing may outlive the pool
                ensureOpen();
            }
            live.add(u);
        }
        metrics.registered(view.capacity());
        return u;
    }

    /** {@code u} was released: deregistered now, unless the pool's close took it already. */
    void deregistered(UserRegistration u) {
        synchronized (this) {
            if (!live.remove(u)) {
                return;
            }
        }
        u.registration.deregister();
        metrics.registered(-u.length());
    }

    private void ensureOpen() {
        if (closed) {
            throw pool.closedError();
        }
    }

    /** The pool closes: no more registrations; returns the live ones (to deregister) with their sizes added. */
    synchronized List<UserRegistration> close() {
        closed = true;
        List<UserRegistration> all = new ArrayList<>(live);
        live.clear();
        return all;
    }
}
