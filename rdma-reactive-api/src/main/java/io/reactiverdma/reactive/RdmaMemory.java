package io.reactiverdma.reactive;

import java.nio.ByteBuffer;

/**
 * Registered memory of one RDMA device (one protection domain), shared by every connection on that device.
 * Registration is expensive (it pins pages and programs the device), so the pool registers large slabs once
 * and hands out slices of them.
 */
public interface RdmaMemory {
    /**
     * A buffer of {@code size} bytes from the pool, for local use only (no remote access): the source of
     * sends and WRITEs, the target of READs. Contents are not cleared. Give it back with
     * {@link RegisteredBuffer#release()}.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ILLEGAL_ARGUMENT}) when
     *                                 {@code size} is not 1 to {@link #maxAllocationSize()}
     */
    RegisteredBuffer allocate(int size);

    /** The largest {@link #allocate(int)}: one slab of the pool. */
    int maxAllocationSize();

    /**
     * Registers the caller's direct buffer (from its position to its limit) with exactly the remote access
     * named: none means local use only. The returned buffer's {@link RegisteredBuffer#release()} deregisters
     * it (once no operation uses it); the caller keeps the {@code ByteBuffer} reachable until then.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ILLEGAL_ARGUMENT}) when the
     *                                 buffer is not direct, is read-only or is empty
     * @throws RdmaException           when the device refuses the registration (for example the locked
     *                                 memory limit, RLIMIT_MEMLOCK, is too low)
     */
    RegisteredBuffer register(ByteBuffer directBuffer, RemoteAccess... remoteAccess);

    /** Allocates a new direct buffer of {@code size} bytes (zeroed) and registers it as {@link #register} does. */
    RegisteredBuffer allocateRegistered(int size, RemoteAccess... remoteAccess);
}
