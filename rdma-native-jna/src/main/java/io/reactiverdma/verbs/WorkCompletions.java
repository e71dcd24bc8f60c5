package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * A reusable array of {@code struct ibv_wc} that {@link CompletionQueue#poll(WorkCompletions)} fills: a
 * flyweight over one direct, native-order buffer, so reading a completion is a few plain memory loads and
 * polling allocates nothing per completion. Indexes run from 0 to {@link #count()}-1 (what the last poll
 * returned).
 * <pre>
 * struct ibv_wc {
 *     uint64_t            wr_id;
 *     enum ibv_wc_status  status;
 *     enum ibv_wc_opcode  opcode;
 *     uint32_t            vendor_err;
 *     uint32_t            byte_len;
 *     union {
 *         __be32          imm_data;           // when wc_flags &amp; IBV_WC_WITH_IMM
 *         uint32_t        invalidated_rkey;   // when wc_flags &amp; IBV_WC_WITH_INV
 *     };
 *     uint32_t            qp_num;
 *     uint32_t            src_qp;
 *     unsigned int        wc_flags;
 *     uint16_t            pkey_index;
 *     uint16_t            slid;
 *     uint8_t             sl;
 *     uint8_t             dlid_path_bits;
 * };
 * </pre>
 * Only {@code wr_id}, {@code status}, {@code qp_num} and {@code vendor_err} are defined for a failed
 * completion. Not thread-safe: one poller owns an instance.
 */
@NativeStruct(value = "struct ibv_wc", header = "infiniband/verbs.h")
public final class WorkCompletions {
    public static final int SIZE = 48;
    @NativeField("wr_id")
    public static final int WR_ID_OFFSET = 0;
    @NativeField("status")
    public static final int STATUS_OFFSET = 8;
    @NativeField("opcode")
    public static final int OPCODE_OFFSET = 12;
    @NativeField("vendor_err")
    public static final int VENDOR_ERR_OFFSET = 16;
    @NativeField("byte_len")
    public static final int BYTE_LEN_OFFSET = 20;
    @NativeField("imm_data")
    public static final int IMM_DATA_OFFSET = 24;
    @NativeField("invalidated_rkey")
    public static final int INVALIDATED_RKEY_OFFSET = 24;
    @NativeField("qp_num")
    public static final int QP_NUM_OFFSET = 28;
    @NativeField("src_qp")
    public static final int SRC_QP_OFFSET = 32;
    @NativeField("wc_flags")
    public static final int WC_FLAGS_OFFSET = 36;
    @NativeField("pkey_index")
    public static final int PKEY_INDEX_OFFSET = 40;
    @NativeField("slid")
    public static final int SLID_OFFSET = 42;
    @NativeField("sl")
    public static final int SL_OFFSET = 44;
    @NativeField("dlid_path_bits")
    public static final int DLID_PATH_BITS_OFFSET = 45;

    private final int capacity;
    private final ByteBuffer buffer;
    private final long address;
    final Pointer pointer;
    /** num_entries for ibv_poll_cq, boxed once. */
    final Integer boxedCapacity;
    private int count;

    /** An array of {@code capacity} completions (1 to 65536). */
    public WorkCompletions(int capacity) {
        if (capacity < 1 || capacity > 65536) {
            throw new IllegalArgumentException("capacity must be 1..65536, got " + capacity);
        }
        this.capacity = capacity;
        this.buffer = Buffers.allocate(capacity * SIZE);
        this.address = Buffers.address(buffer);
        this.pointer = new Pointer(address);
        this.boxedCapacity = capacity;
    }

    /** How many completions the array holds. */
    public int capacity() {
        return capacity;
    }

    /** How many completions the last poll returned. */
    public int count() {
        return count;
    }

    void count(int n) {
        this.count = n;
    }

    /** Address of element 0 (the {@code struct ibv_wc *} passed to ibv_poll_cq). */
    public long address() {
        return address;
    }

    /** The backing buffer (native order), for tests and for passing one entry to C. */
    public ByteBuffer buffer() {
        return buffer;
    }

    private int at(int i) {
        // Against the count, not the capacity: past the count lie an earlier poll's completions.
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("completion index " + i + " outside 0.." + (count - 1)
                    + " (the last poll returned " + count + ")");
        }
        return i * SIZE;
    }

    /** The wr_id given when the work request was posted. */
    public long wrId(int i) {
        return buffer.getLong(at(i) + WR_ID_OFFSET);
    }

    public WcStatus status(int i) {
        return WcStatus.of(statusCode(i));
    }

    /** The raw {@code enum ibv_wc_status} value. */
    public int statusCode(int i) {
        return buffer.getInt(at(i) + STATUS_OFFSET);
    }

    public boolean isSuccess(int i) {
        return statusCode(i) == 0;
    }

    /** The opcode (undefined for failed completions). */
    public WcOpcode opcode(int i) {
        return WcOpcode.of(opcodeCode(i));
    }

    public int opcodeCode(int i) {
        return buffer.getInt(at(i) + OPCODE_OFFSET);
    }

    public int vendorErr(int i) {
        return buffer.getInt(at(i) + VENDOR_ERR_OFFSET);
    }

    /**
     * Bytes received (receive completions; for UD it includes the 40-byte GRH). The field is a {@code u32}
     * and a message may be as long as the device's {@code max_msg_sz} (2^31 on rxe), so it is returned
     * unsigned, as a long: never negative.
     */
    public long byteLen(int i) {
        return Integer.toUnsignedLong(buffer.getInt(at(i) + BYTE_LEN_OFFSET));
    }

    /**
     * The immediate data in host order, as the sender passed it to {@link SendWorkRequests#immData}
     * (converted from {@code __be32}). Valid when {@code wcFlags(i) & WcFlags.WITH_IMM}.
     */
    public int immData(int i) {
        return Buffers.getIntBE(buffer, at(i) + IMM_DATA_OFFSET);
    }

    /** The invalidated rkey, valid when {@code wcFlags(i) & WcFlags.WITH_INV}. */
    public int invalidatedRkey(int i) {
        return buffer.getInt(at(i) + INVALIDATED_RKEY_OFFSET);
    }

    /** The local QP number the completion belongs to. */
    public int qpNum(int i) {
        return buffer.getInt(at(i) + QP_NUM_OFFSET);
    }

    /** The remote QP number (UD receives). */
    public int srcQp(int i) {
        return buffer.getInt(at(i) + SRC_QP_OFFSET);
    }

    /** {@link WcFlags} bits. */
    public int wcFlags(int i) {
        return buffer.getInt(at(i) + WC_FLAGS_OFFSET);
    }

    public boolean hasImmData(int i) {
        return (wcFlags(i) & WcFlags.WITH_IMM) != 0;
    }

    public int pkeyIndex(int i) {
        return Short.toUnsignedInt(buffer.getShort(at(i) + PKEY_INDEX_OFFSET));
    }

    public int slid(int i) {
        return Short.toUnsignedInt(buffer.getShort(at(i) + SLID_OFFSET));
    }

    public int sl(int i) {
        return buffer.get(at(i) + SL_OFFSET) & 0xff;
    }

    public int dlidPathBits(int i) {
        return buffer.get(at(i) + DLID_PATH_BITS_OFFSET) & 0xff;
    }

    /** Address of element i, to pass one {@code struct ibv_wc} to C (e.g. ibv_create_ah_from_wc). */
    public long address(int i) {
        return address + at(i);
    }

    /** One completion as text, for logs and assertion messages (allocates). */
    public String describe(int i) {
        int status = statusCode(i);
        StringBuilder sb = new StringBuilder("wc{wr_id=").append(wrId(i)).append(", status=")
                .append(WcStatus.of(status)).append(" (").append(Verbs.wcStatusStr(status)).append(')');
        if (status == 0) {
            sb.append(", opcode=").append(opcode(i)).append(", byte_len=").append(byteLen(i));
            if (hasImmData(i)) {
                sb.append(", imm=0x").append(Integer.toHexString(immData(i)));
            }
        } else {
            sb.append(", vendor_err=0x").append(Integer.toHexString(vendorErr(i)));
        }
        return sb.append(", qp_num=").append(qpNum(i)).append('}').toString();
    }

    @Override
    public String toString() {
        return "WorkCompletions[" + count + "/" + capacity + "]";
    }
}
