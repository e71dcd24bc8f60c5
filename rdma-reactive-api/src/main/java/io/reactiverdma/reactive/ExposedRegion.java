package io.reactiverdma.reactive;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;

import java.util.Set;

/**
 * A registered buffer exposed to the peer of one connection only ({@link RdmaConnection#expose}): a type 2
 * memory window bound to that connection's queue pair gives the peer the access asked for, under an rkey that
 * the device accepts on that connection alone. Another connection's peer that uses it, having been handed
 * it or having guessed it, gets a remote access error (its operation fails with
 * {@link RdmaCompletionException}, status {@code REM_ACCESS_ERR}, and its connection breaks), as does this
 * connection's peer once the region is revoked.
 *
 * <p>The region is revoked by {@link #revoke()} or {@link #dispose()}, and automatically when its connection
 * closes. Until it is revoked the buffer stays held: releasing it returns the memory only after the revoke.
 * Thread-safe.
 */
public interface ExposedRegion extends Disposable {
    /**
     * What to hand to the peer (for example in a message): the buffer's address and length with the window's
     * rkey. Valid on the connection that exposed it only, until revoked.
     */
    RemoteRegion remoteRegion();

    /** The access granted to the peer. */
    Set<RemoteAccess> access();

    /**
     * Revokes the peer's access: invalidates the window with a LOCAL_INV work request on the connection's send
     * queue (behind what was queued before it, so operations already queued on this side still run). Completes,
     * never errors, once the device no longer accepts the rkey (from then on the peer's operations through it
     * fail with a remote access error) and the buffer's hold is dropped; at once when already revoked; when the
     * connection closes first, once the window has died with the connection. Every subscription asks for the
     * same revocation; cancelling stops waiting, not the revocation.
     */
    Mono<Void> revoke();

    /** Starts {@link #revoke()} without waiting for it. Idempotent. */
    @Override
    void dispose();

    /** True once a revocation was asked for (or the connection closed). */
    @Override
    boolean isDisposed();
}
