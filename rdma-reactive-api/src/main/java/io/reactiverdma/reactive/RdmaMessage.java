package io.reactiverdma.reactive;

import java.nio.ByteBuffer;

/**
 * One two-sided message received by {@link RdmaConnection#receive()}: a read-only view on the registered
 * receive buffer it landed in. The consumer {@link #release() releases} it when done (or copies it with
 * {@link #toByteArray()} and then releases): only then does the buffer go back to the connection and can a
 * new receive be posted into it. A connection has {@link RdmaOption#RECEIVE_QUEUE_DEPTH} receive buffers; a
 * consumer that holds them all stops the flow (backpressure), it does not make the connection allocate more.
 */
public interface RdmaMessage extends AutoCloseable {
    /**
     * The payload: a read-only, big-endian view (Java's default, so it reads back what the sender put into a
     * plain {@code ByteBuffer}), position 0, limit {@link #length()}.
     *
     * @throws InvalidRequestException ({@link InvalidRequestException.Reason#BUFFER_RELEASED}) after release
     */
    ByteBuffer data();

    /** The payload length in bytes. */
    int length();

    /** True when the peer sent it with immediate data ({@code SEND_WITH_IMM} or {@code RDMA_WRITE_WITH_IMM}). */
    boolean hasImmediate();

    /** The 32-bit immediate data in host order (0 when there is none). */
    int immediate();

    /** A copy of the payload. */
    byte[] toByteArray();

    /** Gives the receive buffer back; idempotent. */
    void release();

    /** Same as {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
