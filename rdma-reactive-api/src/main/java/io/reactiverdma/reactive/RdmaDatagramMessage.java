package io.reactiverdma.reactive;

import reactor.util.annotation.Nullable;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * One received datagram: a view of the receive buffer it arrived in, which goes back to the device when
 * {@link #release() released} (exactly once; until then that buffer cannot take another datagram).
 */
public interface RdmaDatagramMessage extends AutoCloseable {
    /**
     * The payload: a read-only view, valid until {@link #release()}; afterwards the buffer may hold another
     * sender's datagram, so this fails with {@link InvalidRequestException} ({@code BUFFER_RELEASED}).
     */
    ByteBuffer data();

    /** Payload bytes. */
    int length();

    /** The sender's IP address (from the packet's GRH; port 0: UD carries no port). */
    InetSocketAddress sender();

    /** The sender's QP number ({@code src_qp}). */
    int senderQpNumber();

    /** The multicast group it was sent to, or null when it was sent to this endpoint's address. */
    @Nullable
    InetSocketAddress group();

    /** True when it carried immediate data. */
    boolean hasImmediate();

    /** The immediate data (0 when none). */
    int immediate();

    /** A copy of the payload; after {@link #release()} fails as {@link #data()} does. */
    byte[] toByteArray();

    /** Gives the receive buffer back; idempotent. */
    void release();

    /** {@link #release()}. */
    @Override
    default void close() {
        release();
    }
}
