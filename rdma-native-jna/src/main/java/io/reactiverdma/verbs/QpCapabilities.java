package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * The sizes of a QP's work queues, as requested or as granted (the provider may round up).
 * <pre>
 * struct ibv_qp_cap {
 *     uint32_t max_send_wr;
 *     uint32_t max_recv_wr;
 *     uint32_t max_send_sge;
 *     uint32_t max_recv_sge;
 *     uint32_t max_inline_data;
 * };
 * </pre>
 * Offsets are those of the members inside {@code struct ibv_qp_init_attr} / {@code struct ibv_qp_attr}
 * ({@link QpInitAttributes#CAP_MAX_SEND_WR_OFFSET}, {@link QpAttributes#CAP_MAX_SEND_WR_OFFSET}).
 *
 * @param maxSendWr     outstanding send work requests
 * @param maxRecvWr     outstanding receive work requests (0 with an SRQ)
 * @param maxSendSge    gather entries per send WR
 * @param maxRecvSge    scatter entries per receive WR
 * @param maxInlineData bytes a send may carry with {@link SendFlags#INLINE}
 */
@NativeStruct(value = "struct ibv_qp_cap", header = IbvStructs.VERBS_H)
public record QpCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
    public static final int SIZE = 20;
    @NativeField("max_send_wr")
    static final int MAX_SEND_WR = 0;
    @NativeField("max_recv_wr")
    static final int MAX_RECV_WR = 4;
    @NativeField("max_send_sge")
    static final int MAX_SEND_SGE = 8;
    @NativeField("max_recv_sge")
    static final int MAX_RECV_SGE = 12;
    @NativeField("max_inline_data")
    static final int MAX_INLINE_DATA = 16;

    /** Reads a {@code struct ibv_qp_cap} at {@code offset}. */
    public static QpCapabilities read(ByteBuffer b, int offset) {
        return new QpCapabilities(b.getInt(offset + MAX_SEND_WR), b.getInt(offset + MAX_RECV_WR),
                b.getInt(offset + MAX_SEND_SGE), b.getInt(offset + MAX_RECV_SGE), b.getInt(offset + MAX_INLINE_DATA));
    }

    void writeTo(ByteBuffer b, int offset) {
        b.putInt(offset + MAX_SEND_WR, maxSendWr);
        b.putInt(offset + MAX_RECV_WR, maxRecvWr);
        b.putInt(offset + MAX_SEND_SGE, maxSendSge);
        b.putInt(offset + MAX_RECV_SGE, maxRecvSge);
        b.putInt(offset + MAX_INLINE_DATA, maxInlineData);
    }
}
