package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * Layout of one scatter/gather element, as used inside {@link SendWorkRequests} and
 * {@link ReceiveWorkRequests} (which own the arrays).
 * <pre>
 * struct ibv_sge {
 *     uint64_t addr;    // virtual address inside a memory region (any address for INLINE sends)
 *     uint32_t length;  // bytes
 *     uint32_t lkey;    // the MR's local key
 * };
 * </pre>
 */
@NativeStruct(value = "struct ibv_sge", header = "infiniband/verbs.h")
public final class Sge {
    public static final int SIZE = 16;
    @NativeField("addr")
    public static final int ADDR_OFFSET = 0;
    @NativeField("length")
    public static final int LENGTH_OFFSET = 8;
    @NativeField("lkey")
    public static final int LKEY_OFFSET = 12;

    private Sge() {
    }

    static void put(ByteBuffer b, int offset, long addr, int length, int lkey) {
        b.putLong(offset + ADDR_OFFSET, addr);
        b.putInt(offset + LENGTH_OFFSET, length);
        b.putInt(offset + LKEY_OFFSET, lkey);
    }
}
