package io.reactiverdma.reactive;

import java.nio.ByteBuffer;
import java.util.Set;

/**
 * A range of registered (pinned, device-visible) off-heap memory: the source or target of sends, RDMA
 * WRITE/READ and atomics. Either a buffer from the connection's pool ({@link RdmaMemory#allocate(int)}, no
 * remote access) or memory the caller registered ({@link RdmaMemory#register}, remote access exactly as
 * asked), or a {@link #slice slice} of one of those.
 *
 * <p>Ownership: the caller owns a root buffer until it calls {@link #release()}. An operation that uses the
 * buffer holds it until its completion (or flush) has arrived, even when its {@code Mono} was cancelled or
 * timed out, so a release never hands memory the device may still touch back to the pool or to the OS: the
 * release happens when the last such operation is done. Do not change a buffer's contents while a send or
 * WRITE from it is in flight, nor read a READ's target before its {@code Mono} completed.
 *
 * <p>Thread-safe, except {@link #buffer()}'s position and limit, which belong to whoever holds the view.
 */
public interface RegisteredBuffer {
    /**
     * A view of the whole range: position 0, limit and capacity {@link #length()}, big-endian like every
     * {@code ByteBuffer} Java makes (so a {@code getLong} here reads what a peer's {@code ByteBuffer.putLong}
     * wrote). Each call returns a new view over the same memory. Words that remote atomics work on are in the
     * host's native order: use {@code buffer().order(ByteOrder.nativeOrder())} for those.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#BUFFER_RELEASED}) after release
     */
    ByteBuffer buffer();

    /** The length of the range in bytes. */
    int length();

    /**
     * A view of {@code [offset, offset + length)} of this buffer: same memory, same registration, same
     * lifetime as its root (releasing a slice does nothing: release the root).
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#OUTSIDE_REGION}) when the range
     *                                 does not lie inside this buffer
     */
    RegisteredBuffer slice(int offset, int length);

    /** The kinds of remote access the registration grants (empty for pooled buffers). */
    Set<RemoteAccess> remoteAccess();

    /**
     * This range as a {@link RemoteRegion} to hand to a peer.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#ACCESS_NOT_GRANTED}) when the
     *                                 memory was registered without any remote access
     */
    RemoteRegion remoteRegion();

    /** True once the root was released (the memory may be in use by someone else or unregistered). */
    boolean isReleased();

    /**
     * Ends the caller's ownership of a root buffer: a pooled buffer goes back to its pool, registered memory
     * is deregistered, in both cases once no operation that uses it is in flight. Idempotent. On a slice it
     * does nothing.
     */
    void release();
}
