package io.reactiverdma.verbs;

import com.sun.jna.Pointer;
import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A reusable chain of up to {@code capacity} {@code struct ibv_recv_wr}, each with up to {@code maxSge}
 * scatter entries, in one direct native-order buffer (a flyweight: building and posting allocates nothing).
 * Posted with {@link QueuePair#postReceive} or {@link SharedReceiveQueue#postReceive}; reusable as soon as
 * the post returns.
 * <pre>
 * struct ibv_recv_wr {
 *     uint64_t             wr_id;
 *     struct ibv_recv_wr  *next;
 *     struct ibv_sge      *sg_list;
 *     int                  num_sge;
 * };
 * </pre>
 * Not thread-safe.
 */
@NativeStruct(value = "struct ibv_recv_wr", header = "infiniband/verbs.h")
public final class ReceiveWorkRequests {
    public static final int SIZE = 32;
    @NativeField("wr_id")
    public static final int WR_ID_OFFSET = 0;
    @NativeField("next")
    public static final int NEXT_OFFSET = 8;
    @NativeField("sg_list")
    public static final int SG_LIST_OFFSET = 16;
    @NativeField("num_sge")
    public static final int NUM_SGE_OFFSET = 24;

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
     * @param capacity work requests in the chain (1..65536)
     * @param maxSge   scatter entries per work request (0..64; at most the QP's / SRQ's max_recv_sge)
     */
    public ReceiveWorkRequests(int capacity, int maxSge) {
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
    }

    public int capacity() {
        return capacity;
    }

    public int maxSge() {
        return maxSge;
    }

    public int count() {
        return count;
    }

    public ReceiveWorkRequests clear() {
        count = 0;
        return this;
    }

    public long address() {
        return address;
    }

    public long address(int i) {
        return address + at(i);
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    private int at(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("work request index " + i + " outside 0.." + (count - 1));
        }
        return i * SIZE;
    }

    /** Appends a work request with no SGEs, linked to the previous one; returns its index. */
    public int add(long wrId) {
        if (count == capacity) {
            throw new IllegalStateException("the chain is full (" + capacity + " work requests); clear() it or make it larger");
        }
        int i = count++;
        int o = i * SIZE;
        buffer.putLong(o + WR_ID_OFFSET, wrId);
        buffer.putLong(o + NEXT_OFFSET, 0L);
        buffer.putLong(o + SG_LIST_OFFSET, maxSge == 0 ? 0L : address + sgeBase + (long) i * maxSge * Sge.SIZE);
        buffer.putInt(o + NUM_SGE_OFFSET, 0);
        if (i > 0) {
            buffer.putLong((i - 1) * SIZE + NEXT_OFFSET, address + o);
        }
        return i;
    }

    /** Appends a work request with one SGE; returns its index. */
    public int add(long wrId, long addr, int length, int lkey) {
        int i = add(wrId);
        sge(i, addr, length, lkey);
        return i;
    }

    /** Appends a work request receiving into {@code length} bytes at {@code offset} of an MR; returns its index. */
    public int add(long wrId, MemoryRegion mr, long offset, int length) {
        int i = add(wrId);
        sge(i, mr, offset, length);
        return i;
    }

    /** Appends a scatter element to work request i. */
    public ReceiveWorkRequests sge(int i, long addr, int length, int lkey) {
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

    public ReceiveWorkRequests sge(int i, MemoryRegion mr, long offset, int length) {
        Objects.requireNonNull(mr, "mr");
        mr.ensureOpen();
        mr.checkRange(offset, length);
        return sge(i, mr.address() + offset, length, mr.lkey());
    }

    public long wrId(int i) {
        return buffer.getLong(at(i) + WR_ID_OFFSET);
    }

    public long next(int i) {
        return buffer.getLong(at(i) + NEXT_OFFSET);
    }

    public long sgList(int i) {
        return buffer.getLong(at(i) + SG_LIST_OFFSET);
    }

    public int numSge(int i) {
        return buffer.getInt(at(i) + NUM_SGE_OFFSET);
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

    /** After a failed post: index of the rejected work request ({@code *bad_wr}), or -1. */
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
        return "ReceiveWorkRequests[" + count + "/" + capacity + ", maxSge " + maxSge + "]";
    }
}
