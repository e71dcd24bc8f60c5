package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.ClosedResourceException;
import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeResource;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A reusable chain of up to {@code capacity} {@code struct ibv_send_wr}, each with its own array of up to
 * {@code maxSge} {@code struct ibv_sge}, in one direct native-order buffer: a flyweight, so building and
 * posting a chain allocates nothing. {@link #add} appends a work request and links the previous one's
 * {@code next} to it; {@link QueuePair#postSend(SendWorkRequests)} posts the whole chain in one call.
 * {@link #clear()} empties it for reuse. Each slot is a template written in place: {@link #add} rewrites only
 * the first 36 bytes (wr_id, next, sg_list, num_sge, opcode, send_flags) and zeroes the rest of the slot
 * only when a setter of a later field ({@link #rdma}, {@link #atomic}, {@link #ud}, {@link #immData},
 * {@link #invalidateRkey}, {@link #bindMw}) or a write through {@link #buffer()} touched it since, so a
 * chain of plain sends (the streaming path) writes six fields per request instead of zeroing 128 bytes
 * (issue 20: 13 % of the streamed path's samples were that zeroing). Every field {@code add} and the
 * setters did not set still reads 0. The provider copies each request when posting, so the chain may be
 * changed or reused as soon as postSend returns (the <em>data</em> buffers must stay untouched until the
 * completion, except with {@link SendFlags#INLINE}).
 * <pre>
 * struct ibv_send_wr {
 *     uint64_t             wr_id;
 *     struct ibv_send_wr  *next;
 *     struct ibv_sge      *sg_list;
 *     int                  num_sge;
 *     enum ibv_wr_opcode   opcode;
 *     unsigned int         send_flags;
 *     union {
 *         __be32           imm_data;          // *_WITH_IMM: network byte order
 *         uint32_t         invalidate_rkey;   // *_INV
 *     };
 *     union {
 *         struct { uint64_t remote_addr; uint32_t rkey; } rdma;
 *         struct { uint64_t remote_addr; uint64_t compare_add; uint64_t swap; uint32_t rkey; } atomic;
 *         struct { struct ibv_ah *ah; uint32_t remote_qpn; uint32_t remote_qkey; } ud;
 *     } wr;
 *     union { struct { uint32_t remote_srqn; } xrc; } qp_type;
 *     union {
 *         struct { struct ibv_mw *mw; uint32_t rkey; struct ibv_mw_bind_info bind_info; } bind_mw;
 *         struct { void *hdr; uint16_t hdr_sz; uint16_t mss; } tso;
 *     };
 * };
 * </pre>
 * Not thread-safe: one thread builds and posts a chain at a time.
 */
@NativeStruct(value = "struct ibv_send_wr", header = "infiniband/verbs.h")
public final class SendWorkRequests {
    public static final int SIZE = 128;
    @NativeField("wr_id")
    public static final int WR_ID_OFFSET = 0;
    @NativeField("next")
    public static final int NEXT_OFFSET = 8;
    @NativeField("sg_list")
    public static final int SG_LIST_OFFSET = 16;
    @NativeField("num_sge")
    public static final int NUM_SGE_OFFSET = 24;
    @NativeField("opcode")
    public static final int OPCODE_OFFSET = 28;
    @NativeField("send_flags")
    public static final int SEND_FLAGS_OFFSET = 32;
    @NativeField("imm_data")
    public static final int IMM_DATA_OFFSET = 36;
    @NativeField("invalidate_rkey")
    public static final int INVALIDATE_RKEY_OFFSET = 36;
    @NativeField("wr.rdma.remote_addr")
    public static final int RDMA_REMOTE_ADDR_OFFSET = 40;
    @NativeField("wr.rdma.rkey")
    public static final int RDMA_RKEY_OFFSET = 48;
    @NativeField("wr.atomic.remote_addr")
    public static final int ATOMIC_REMOTE_ADDR_OFFSET = 40;
    @NativeField("wr.atomic.compare_add")
    public static final int ATOMIC_COMPARE_ADD_OFFSET = 48;
    @NativeField("wr.atomic.swap")
    public static final int ATOMIC_SWAP_OFFSET = 56;
    @NativeField("wr.atomic.rkey")
    public static final int ATOMIC_RKEY_OFFSET = 64;
    @NativeField("wr.ud.ah")
    public static final int UD_AH_OFFSET = 40;
    @NativeField("wr.ud.remote_qpn")
    public static final int UD_REMOTE_QPN_OFFSET = 48;
    @NativeField("wr.ud.remote_qkey")
    public static final int UD_REMOTE_QKEY_OFFSET = 52;
    @NativeField("qp_type.xrc.remote_srqn")
    public static final int XRC_REMOTE_SRQN_OFFSET = 72;
    @NativeField("bind_mw.mw")
    public static final int BIND_MW_MW_OFFSET = 80;
    @NativeField("bind_mw.rkey")
    public static final int BIND_MW_RKEY_OFFSET = 88;
    @NativeField("bind_mw.bind_info.mr")
    public static final int BIND_MW_MR_OFFSET = 96;
    @NativeField("bind_mw.bind_info.addr")
    public static final int BIND_MW_ADDR_OFFSET = 104;
    @NativeField("bind_mw.bind_info.length")
    public static final int BIND_MW_LENGTH_OFFSET = 112;
    @NativeField("bind_mw.bind_info.mw_access_flags")
    public static final int BIND_MW_ACCESS_FLAGS_OFFSET = 120;

    private final int capacity;
    private final int maxSge;
    private final ByteBuffer buffer;
    private final long address;
    private final int sgeBase;
    private final int badWrOffset;
    final Pointer pointer;
    final Pointer badWrPointer;
    private int count;
    /**
     * Per slot: whether a field from {@code imm_data} on may be non-zero (a setter wrote it, or the buffer
     * was handed out), so the next {@link #add} of that slot must zero them.
     */
    private final boolean[] tailWritten;
    /**
     * Objects whose native pointers the chain holds (address handles, memory windows and their MRs), per
     * work request, so a post can refuse a chain naming one that was closed: the provider would dereference
     * freed memory. Null until the first such work request.
     */
    private NativeResource[][] referenced;
    private int referencing;

    /**
     * @param capacity work requests in the chain (1..65536)
     * @param maxSge   scatter/gather entries per work request (0..64; at most the QP's max_send_sge)
     */
    public SendWorkRequests(int capacity, int maxSge) {
        if (capacity < 1 || capacity > 65536) {
            throw new IllegalArgumentException("capacity must be 1..65536, got " + capacity);
        }
        if (maxSge < 0 || maxSge > 64) {
            throw new IllegalArgumentException("maxSge must be 0..64, got " + maxSge);
        }
        this.capacity = capacity;
        this.maxSge = maxSge;
        this.sgeBase = capacity * SIZE;
        this.badWrOffset = sgeBase + capacity * maxSge * Sge.SIZE;
        this.buffer = Buffers.allocate(badWrOffset + 8);
        this.address = Buffers.address(buffer);
        this.pointer = new Pointer(address);
        this.badWrPointer = new Pointer(address + badWrOffset);
        this.tailWritten = new boolean[capacity];
    }

    public int capacity() {
        return capacity;
    }

    public int maxSge() {
        return maxSge;
    }

    /** Work requests in the chain. */
    public int count() {
        return count;
    }

    /** Empties the chain (the memory is reused by the next {@link #add}). */
    public SendWorkRequests clear() {
        count = 0;
        if (referencing > 0) {
            java.util.Arrays.fill(referenced, null);
            referencing = 0;
        }
        return this;
    }

    /** Address of the first work request (the {@code struct ibv_send_wr *} posted). */
    public long address() {
        return address;
    }

    /** Address of work request i. */
    public long address(int i) {
        return address + at(i);
    }

    /**
     * The backing buffer (native order). What a caller writes through it is not tracked: every slot is zeroed
     * whole again by its next {@link #add}.
     */
    public ByteBuffer buffer() {
        java.util.Arrays.fill(tailWritten, true);
        return buffer;
    }

    private int at(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("work request index " + i + " outside 0.." + (count - 1));
        }
        return i * SIZE;
    }

    /**
     * Appends a work request (wr_id, opcode and flags set, no SGEs, every other field 0) and links it to the
     * previous one. Returns its index. Writes the slot's first 36 bytes; the rest only when it was written
     * since the slot's last {@code add} (see the class comment).
     *
     * @param sendFlags {@link SendFlags} bits (SIGNALED for a completion unless the QP signals all)
     * @throws IllegalStateException when the chain is full
     */
    public int add(long wrId, WrOpcode opcode, int sendFlags) {
        Objects.requireNonNull(opcode, "opcode");
        if (count == capacity) {
            throw new IllegalStateException("the chain is full (" + capacity + " work requests); clear() it or make it larger");
        }
        int i = count++;
        int o = i * SIZE;
        if (referenced != null && referenced[i] != null) {
            referenced[i] = null;
            referencing--;
        }
        if (tailWritten[i]) {
            Buffers.zero(buffer, o + IMM_DATA_OFFSET, SIZE - IMM_DATA_OFFSET);
            tailWritten[i] = false;
        }
        buffer.putLong(o + WR_ID_OFFSET, wrId);
        buffer.putLong(o + NEXT_OFFSET, 0L);
        buffer.putLong(o + SG_LIST_OFFSET, maxSge == 0 ? 0L : address + sgeBase + (long) i * maxSge * Sge.SIZE);
        buffer.putInt(o + NUM_SGE_OFFSET, 0);
        buffer.putInt(o + OPCODE_OFFSET, opcode.value());
        buffer.putInt(o + SEND_FLAGS_OFFSET, sendFlags);
        if (i > 0) {
            buffer.putLong((i - 1) * SIZE + NEXT_OFFSET, address + o);
        }
        return i;
    }

    /**
     * Sets {@code sendFlags} bits on work request i in addition to those it has (to signal the last request
     * of a chain once the chain's length is known).
     */
    public SendWorkRequests addSendFlags(int i, int sendFlags) {
        int o = at(i) + SEND_FLAGS_OFFSET;
        buffer.putInt(o, buffer.getInt(o) | sendFlags);
        return this;
    }

    /** Appends a scatter/gather element to work request i: {@code length} bytes at {@code addr}, MR key {@code lkey}. */
    public SendWorkRequests sge(int i, long addr, int length, int lkey) {
        int o = at(i);
        int n = buffer.getInt(o + NUM_SGE_OFFSET);
        if (n == maxSge) {
            throw new IllegalStateException("work request " + i + " already has maxSge=" + maxSge + " SGEs");
        }
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        Sge.put(buffer, sgeBase + (i * maxSge + n) * Sge.SIZE, addr, length, lkey);
        buffer.putInt(o + NUM_SGE_OFFSET, n + 1);
        return this;
    }

    /** Appends {@code length} bytes at {@code offset} of a memory region as an SGE of work request i. */
    public SendWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        Objects.requireNonNull(mr, "mr");
        mr.ensureOpen();
        mr.checkRange(offset, length);
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    /** Remote target of an RDMA WRITE / READ / WRITE_WITH_IMM. */
    public SendWorkRequests rdma(int i, long remoteAddr, int rkey) {
        int o = at(i);
        tailWritten[i] = true;
        buffer.putLong(o + RDMA_REMOTE_ADDR_OFFSET, remoteAddr);
        buffer.putInt(o + RDMA_RKEY_OFFSET, rkey);
        return this;
    }

    /**
     * Operands of an atomic: the 8-byte aligned remote address, its rkey, the compare value (CMP_AND_SWP) or
     * the addend (FETCH_AND_ADD), and the swap value (CMP_AND_SWP). The local SGE (8 bytes) receives the
     * original remote value.
     */
    public SendWorkRequests atomic(int i, long remoteAddr, int rkey, long compareAdd, long swap) {
        if ((remoteAddr & 7) != 0) {
            throw new IllegalArgumentException("atomic remoteAddr must be 8-byte aligned, got 0x" + Long.toHexString(remoteAddr));
        }
        int o = at(i);
        tailWritten[i] = true;
        buffer.putLong(o + ATOMIC_REMOTE_ADDR_OFFSET, remoteAddr);
        buffer.putLong(o + ATOMIC_COMPARE_ADD_OFFSET, compareAdd);
        buffer.putLong(o + ATOMIC_SWAP_OFFSET, swap);
        buffer.putInt(o + ATOMIC_RKEY_OFFSET, rkey);
        return this;
    }

    /** Destination of a UD send: address handle, remote QP number and Q_Key. */
    public SendWorkRequests ud(int i, AddressHandle ah, int remoteQpn, int remoteQkey) {
        Objects.requireNonNull(ah, "ah");
        ah.ensureOpen();
        int o = at(i);
        tailWritten[i] = true;
        buffer.putLong(o + UD_AH_OFFSET, ah.address());
        buffer.putInt(o + UD_REMOTE_QPN_OFFSET, remoteQpn);
        buffer.putInt(o + UD_REMOTE_QKEY_OFFSET, remoteQkey);
        reference(i, ah);
        return this;
    }

    /** Immediate data (host order; stored in network order as the verbs API requires). */
    public SendWorkRequests immData(int i, int imm) {
        int o = at(i);
        tailWritten[i] = true;
        Buffers.putIntBE(buffer, o + IMM_DATA_OFFSET, imm);
        return this;
    }

    /** The rkey a SEND_WITH_INV / LOCAL_INV invalidates. */
    public SendWorkRequests invalidateRkey(int i, int rkey) {
        int o = at(i);
        tailWritten[i] = true;
        buffer.putInt(o + INVALIDATE_RKEY_OFFSET, rkey);
        return this;
    }

    /**
     * Operands of a BIND_MW work request (type 2 memory windows): the window, its new rkey (usually
     * {@code Verbs.incRkey(mw.rkey())}), and the MR range and access it grants.
     */
    public SendWorkRequests bindMw(int i, MemoryWindow mw, int newRkey, MemoryRegion mr, long addr, long length, int access) {
        Objects.requireNonNull(mw, "mw");
        Objects.requireNonNull(mr, "mr");
        mw.ensureOpen();
        mr.ensureOpen();
        int o = at(i);
        tailWritten[i] = true;
        buffer.putLong(o + BIND_MW_MW_OFFSET, mw.address());
        buffer.putInt(o + BIND_MW_RKEY_OFFSET, newRkey);
        buffer.putLong(o + BIND_MW_MR_OFFSET, mr.handleAddress());
        buffer.putLong(o + BIND_MW_ADDR_OFFSET, addr);
        buffer.putLong(o + BIND_MW_LENGTH_OFFSET, length);
        buffer.putInt(o + BIND_MW_ACCESS_FLAGS_OFFSET, access);
        reference(i, mw, mr);
        mw.bindingTo(mr);
        return this;
    }

    private void reference(int i, NativeResource... objects) {
        if (referenced == null) {
            referenced = new NativeResource[capacity][];
        }
        if (referenced[i] == null) {
            referencing++;
        }
        referenced[i] = objects;
    }

    /**
     * Throws {@link ClosedResourceException} when a work request names an address handle, memory window or
     * memory region that was closed since: posting it would make the provider read freed memory.
     */
    void checkReferences() {
        if (referencing == 0) {
            return;
        }
        for (int i = 0; i < count; i++) {
            NativeResource[] objects = referenced[i];
            if (objects != null) {
                for (NativeResource r : objects) {
                    if (r.isClosed()) {
                        throw new ClosedResourceException(r.description() + " (named by work request " + i + ")");
                    }
                }
            }
        }
    }

    // ----------------------------------------------------------------------------------------- reading
    public long wrId(int i) {
        return buffer.getLong(at(i) + WR_ID_OFFSET);
    }

    /** Address the {@code next} field holds (0 for the last work request). */
    public long next(int i) {
        return buffer.getLong(at(i) + NEXT_OFFSET);
    }

    /** Address the {@code sg_list} field holds. */
    public long sgList(int i) {
        return buffer.getLong(at(i) + SG_LIST_OFFSET);
    }

    public int numSge(int i) {
        return buffer.getInt(at(i) + NUM_SGE_OFFSET);
    }

    public WrOpcode opcode(int i) {
        return WrOpcode.of(buffer.getInt(at(i) + OPCODE_OFFSET));
    }

    public int sendFlags(int i) {
        return buffer.getInt(at(i) + SEND_FLAGS_OFFSET);
    }

    /** Immediate data in host order. */
    public int immData(int i) {
        return Buffers.getIntBE(buffer, at(i) + IMM_DATA_OFFSET);
    }

    public long remoteAddr(int i) {
        return buffer.getLong(at(i) + RDMA_REMOTE_ADDR_OFFSET);
    }

    /** The rkey of an RDMA operation ({@code wr.rdma.rkey}). */
    public int rkey(int i) {
        return buffer.getInt(at(i) + RDMA_RKEY_OFFSET);
    }

    public long compareAdd(int i) {
        return buffer.getLong(at(i) + ATOMIC_COMPARE_ADD_OFFSET);
    }

    public long swap(int i) {
        return buffer.getLong(at(i) + ATOMIC_SWAP_OFFSET);
    }

    public int atomicRkey(int i) {
        return buffer.getInt(at(i) + ATOMIC_RKEY_OFFSET);
    }

    public long udAh(int i) {
        return buffer.getLong(at(i) + UD_AH_OFFSET);
    }

    public int udRemoteQpn(int i) {
        return buffer.getInt(at(i) + UD_REMOTE_QPN_OFFSET);
    }

    public int udRemoteQkey(int i) {
        return buffer.getInt(at(i) + UD_REMOTE_QKEY_OFFSET);
    }

    public long sgeAddr(int i, int j) {
        return buffer.getLong(sgeOffset(i, j) + Sge.ADDR_OFFSET);
    }

    public int sgeLength(int i, int j) {
        return buffer.getInt(sgeOffset(i, j) + Sge.LENGTH_OFFSET);
    }

    public int sgeLkey(int i, int j) {
        return buffer.getInt(sgeOffset(i, j) + Sge.LKEY_OFFSET);
    }

    private int sgeOffset(int i, int j) {
        int n = numSge(i);
        if (j < 0 || j >= n) {
            throw new IndexOutOfBoundsException("SGE index " + j + " outside 0.." + (n - 1) + " of work request " + i);
        }
        return sgeBase + (i * maxSge + j) * Sge.SIZE;
    }

    /**
     * After a failed post: the index of the work request the provider rejected ({@code *bad_wr}), or -1
     * when it did not say.
     */
    public int failedIndex() {
        long bad = buffer.getLong(badWrOffset);
        if (bad < address || bad >= address + (long) count * SIZE) {
            return -1;
        }
        return (int) ((bad - address) / SIZE);
    }

    long badWrAddress() {
        return address + badWrOffset;
    }

    void clearBadWr() {
        buffer.putLong(badWrOffset, 0L);
    }

    @Override
    public String toString() {
        return "SendWorkRequests[" + count + "/" + capacity + ", maxSge " + maxSge + "]";
    }
}
