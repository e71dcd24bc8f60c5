package io.reactiverdma.reactive.impl.verbs;

import java.nio.ByteBuffer;

/** A protection domain ({@code ibv_pd}): memory registrations and queue pairs belong to one. */
public interface ProtectionDomain {
    /**
     * {@code ibv_reg_mr} of the whole of {@code directBuffer} (position 0 to capacity) with
     * {@code accessFlags} ({@code io.reactiverdma.verbs.AccessFlags}). A system call that pins memory: slow
     * for large buffers, so never called under a lock a poller needs.
     */
    Registration register(ByteBuffer directBuffer, int accessFlags);

    /**
     * {@code ibv_alloc_mw} of a type 2 window (a system call).
     *
     * @throws RuntimeException when the device has no type 2 memory windows
     */
    MemoryWindow allocateWindow();

    /**
     * {@code ibv_create_srq} of at least {@code maxWr} receives of one SGE each, its limit not armed.
     */
    SharedReceiveQueue createSharedReceiveQueue(int maxWr);

    /** {@code ibv_dealloc_pd}, after every registration and QP of it is gone. */
    void close();
}
