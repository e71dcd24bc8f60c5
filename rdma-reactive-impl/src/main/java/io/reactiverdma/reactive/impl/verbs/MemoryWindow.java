package io.reactiverdma.reactive.impl.verbs;

import io.reactiverdma.verbs.SendWorkRequests;

/**
 * A type 2 memory window ({@code ibv_mw} of {@code IBV_MW_TYPE_2}): remote access to part of a registration,
 * under its own rkey, valid only on the queue pair it was bound to (a BIND_MW work request posted on that
 * QP's send queue) until it is invalidated (a LOCAL_INV work request) or deallocated. The registration must
 * have been made with {@code AccessFlags.MW_BIND}; it cannot be deregistered while a window is bound to it.
 */
public interface MemoryWindow {
    /**
     * The rkey the next bind gives the window: the current one with its low 8 bits (the key) incremented
     * ({@code ibv_inc_rkey}). Known before the bind, so it can be announced to the peer beforehand.
     */
    int nextRkey();

    /**
     * Adds a signaled BIND_MW work request to {@code wr} (the caller posts it on the QP the window is for):
     * {@code [address, address + length)} of {@code region} with {@code access} (REMOTE_* bits of
     * {@code AccessFlags}), under {@link #nextRkey()}; then the window's rkey is that one. Returns it.
     */
    int writeBind(SendWorkRequests wr, long wrId, Registration region, long address, int length, int access);

    /**
     * Adds a signaled LOCAL_INV work request for the window's current rkey to {@code wr} (posted on the QP it
     * is bound to): once it executed, remote requests with that rkey fail with a remote access error.
     */
    void writeInvalidate(SendWorkRequests wr, long wrId);

    /** {@code ibv_dealloc_mw}: the window and its rkey are gone, also on the QP it was bound to. Idempotent. */
    void deallocate();
}
