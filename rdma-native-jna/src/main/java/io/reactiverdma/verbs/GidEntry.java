package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * One GID table entry with its type, from {@link VerbsContext#queryGidTable(int)} or
 * {@link VerbsContext#queryGidEntry(int, int)}. The GID to use for RoCEv2 over IPv4 is the entry with
 * {@link GidType#ROCE_V2} whose GID {@link Gid#isIpv4Mapped() is IPv4-mapped}.
 * <pre>
 * struct ibv_gid_entry {
 *     union ibv_gid gid;
 *     uint32_t gid_index;
 *     uint32_t port_num;
 *     uint32_t gid_type;      // enum ibv_gid_type
 *     uint32_t ndev_ifindex;  // the netdev the GID belongs to (RoCE), 0 on IB
 * };
 * </pre>
 *
 * @param gid           the GID
 * @param index         its index in the port's GID table (the {@code sgid_index} of an address vector)
 * @param port          the port number
 * @param type          IB, RoCEv1 or RoCEv2
 * @param netdevIfindex ifindex of the network interface (RoCE), 0 if none
 */
@NativeStruct(value = "struct ibv_gid_entry", header = "infiniband/verbs.h")
public record GidEntry(Gid gid, int index, int port, GidType type, int netdevIfindex) {
    public static final int SIZE = 32;
    @NativeField("gid")
    public static final int GID_OFFSET = 0;
    @NativeField("gid_index")
    public static final int GID_INDEX_OFFSET = 16;
    @NativeField("port_num")
    public static final int PORT_NUM_OFFSET = 20;
    @NativeField("gid_type")
    public static final int GID_TYPE_OFFSET = 24;
    @NativeField("ndev_ifindex")
    public static final int NDEV_IFINDEX_OFFSET = 28;

    /** Reads a {@code struct ibv_gid_entry} at {@code offset}. */
    public static GidEntry read(ByteBuffer b, int offset) {
        return new GidEntry(Gid.read(b, offset + GID_OFFSET), b.getInt(offset + GID_INDEX_OFFSET),
                b.getInt(offset + PORT_NUM_OFFSET), GidType.of(b.getInt(offset + GID_TYPE_OFFSET)),
                b.getInt(offset + NDEV_IFINDEX_OFFSET));
    }
}
