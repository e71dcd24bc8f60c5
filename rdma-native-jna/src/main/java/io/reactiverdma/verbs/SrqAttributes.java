package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * Size and limit of a shared receive queue.
 * <pre>
 * struct ibv_srq_attr {
 *     uint32_t max_wr;     // receive WRs the SRQ holds
 *     uint32_t max_sge;    // scatter entries per WR
 *     uint32_t srq_limit;  // arm value: SRQ_LIMIT_REACHED fires when fewer WRs remain (0 = disarmed)
 * };
 * </pre>
 *
 * @param maxWr    receive work requests the SRQ holds
 * @param maxSge   scatter/gather entries per work request
 * @param srqLimit limit (0 = not armed)
 */
@NativeStruct(value = "struct ibv_srq_attr", header = "infiniband/verbs.h")
public record SrqAttributes(int maxWr, int maxSge, int srqLimit) {
    public static final int SIZE = 12;
    @NativeField("max_wr")
    public static final int MAX_WR_OFFSET = 0;
    @NativeField("max_sge")
    public static final int MAX_SGE_OFFSET = 4;
    @NativeField("srq_limit")
    public static final int SRQ_LIMIT_OFFSET = 8;

    public SrqAttributes {
        if (maxWr < 0) {
            throw new IllegalArgumentException("maxWr must be >= 0, got " + maxWr);
        }
        if (maxSge < 0) {
            throw new IllegalArgumentException("maxSge must be >= 0, got " + maxSge);
        }
        if (srqLimit < 0) {
            throw new IllegalArgumentException("srqLimit must be >= 0, got " + srqLimit);
        }
    }

    public static SrqAttributes read(ByteBuffer b, int offset) {
        return new SrqAttributes(b.getInt(offset + MAX_WR_OFFSET), b.getInt(offset + MAX_SGE_OFFSET),
                b.getInt(offset + SRQ_LIMIT_OFFSET));
    }

    public void writeTo(ByteBuffer b, int offset) {
        b.putInt(offset + MAX_WR_OFFSET, maxWr);
        b.putInt(offset + MAX_SGE_OFFSET, maxSge);
        b.putInt(offset + SRQ_LIMIT_OFFSET, srqLimit);
    }
}
