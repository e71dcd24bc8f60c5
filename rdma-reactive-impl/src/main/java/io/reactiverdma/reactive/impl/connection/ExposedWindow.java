package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.ExposedRegion;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.device.EngineBuffer;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.verbs.MemoryWindow;
import io.reactiverdma.verbs.SendWorkRequests;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.util.Set;

/**
 * The engine's {@link ExposedRegion}: a type 2 window onto a held buffer, bound to its connection's QP by a
 * BIND_WINDOW {@link Operation} and invalidated by an INVALIDATE_WINDOW one, both through the connection's
 * send queue like any other operation. Its state belongs to the connection's poller thread; {@link #revoke()}
 * hands the request over. It ends (window deallocated, buffer hold dropped, {@link #revoke()} complete)
 * after the invalidation, after a failed or refused bind, or with its connection
 * ({@link ConnectionWindows}).
 */
final class ExposedWindow implements ExposedRegion {
    private enum State { BINDING, BOUND, REVOKING, ENDED }

    private final EngineConnection connection;
    private final EngineBuffer buffer;
    private final MemoryWindow window;
    private final int accessFlags;
    private final Set<RemoteAccess> access;
    private final RemoteRegion region;
    private final Sinks.Empty<Void> ended = Sinks.empty();
    private volatile boolean revokeRequested;
    // ---- poller thread
    private State state = State.BINDING;

    /** {@code buffer} is held by the caller for this window; the window is allocated and not bound yet. */
    ExposedWindow(EngineConnection connection, EngineBuffer buffer, MemoryWindow window, int accessFlags,
            Set<RemoteAccess> access) {
        this.connection = connection;
        this.buffer = buffer;
        this.window = window;
        this.accessFlags = accessFlags;
        this.access = access;
        this.region = RemoteRegion.of(buffer.address(), buffer.length(), window.nextRkey());
    }

    @Override
    public RemoteRegion remoteRegion() {
        return region;
    }

    @Override
    public Set<RemoteAccess> access() {
        return access;
    }

    @Override
    public Mono<Void> revoke() {
        return Mono.defer(() -> {
            dispose();
            return ended.asMono();
        });
    }

    @Override
    public void dispose() {
        if (!revokeRequested) {
            revokeRequested = true;
            connection.poller.run(this::startRevoke);
        }
    }

    @Override
    public boolean isDisposed() {
        return revokeRequested || connection.isDisposed();
    }

    /** Poller thread: the bind, or the invalidation, writes its work request. */
    void writeWorkRequest(OperationType type, SendWorkRequests wr, long wrId) {
        if (type == OperationType.BIND_WINDOW) {
            window.writeBind(wr, wrId, buffer.registration(), buffer.address(), buffer.length(), accessFlags);
        } else {
            window.writeInvalidate(wr, wrId);
        }
    }

    /**
     * Poller thread: the bind or the invalidation is done (completed, failed, flushed, refused, or cancelled
     * before it was posted). A bind whose subscriber went away is revoked at once.
     */
    void operationDone(OperationType type, boolean succeeded, boolean cancelled) {
        if (type == OperationType.BIND_WINDOW) {
            if (!succeeded) {
                end();
                return;
            }
            state = State.BOUND;
            connection.windows.add(this);
            if (cancelled || revokeRequested) {
                startRevoke();
            }
        } else {
            end(); // invalidated, or flushed by the close: either way nothing reaches the buffer through it
        }
    }

    /** Poller thread. */
    private void startRevoke() {
        if (state != State.BOUND) {
            return; // binding: revoked when bound; revoking or ended already
        }
        if (connection.isDisposed()) {
            return; // the close deallocates it with the connection
        }
        state = State.REVOKING;
        Operation invalidation = Operation.invalidate(connection.send, this);
        invalidation.subscribe(new BaseSubscriber<Object>() {
            @Override
            protected void hookOnError(Throwable e) {
                EngineLog.debug(connection.description() + ": revoking " + region + ": " + e);
            }
        });
        connection.send.submit(invalidation);
    }

    /** Poller thread: deallocates the window and drops the buffer's hold. */
    private void end() {
        if (state == State.ENDED) {
            return;
        }
        state = State.ENDED;
        connection.windows.remove(this);
        deallocate();
        buffer.unretain();
        ended.tryEmitEmpty();
    }

    /**
     * Deallocates the window (idempotent): when it ends, or on the rdma_cm thread when the connection closes,
     * before the QP is destroyed (a bound type 2 window holds on to its QP).
     */
    void deallocate() {
        try {
            window.deallocate();
        } catch (RuntimeException e) {
            EngineLog.error(connection.description() + ": ibv_dealloc_mw of " + region + " failed", e);
        }
    }

    /** Poller thread, once the connection's QP is gone. */
    void endWithConnection() {
        end();
    }

    @Override
    public String toString() {
        return "ExposedRegion{" + region + ", " + access + ", " + connection.description() + "}";
    }
}
