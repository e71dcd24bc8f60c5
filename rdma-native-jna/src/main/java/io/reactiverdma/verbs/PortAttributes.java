package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * A port's attributes, from {@link VerbsContext#queryPort(int)}.
 * <pre>
 * struct ibv_port_attr {
 *     enum ibv_port_state state;
 *     enum ibv_mtu        max_mtu;
 *     enum ibv_mtu        active_mtu;
 *     int                 gid_tbl_len;
 *     uint32_t            port_cap_flags;
 *     uint32_t            max_msg_sz;
 *     uint32_t            bad_pkey_cntr;
 *     uint32_t            qkey_viol_cntr;
 *     uint16_t            pkey_tbl_len;
 *     uint16_t            lid;
 *     uint16_t            sm_lid;
 *     uint8_t             lmc;
 *     uint8_t             max_vl_num;
 *     uint8_t             sm_sl;
 *     uint8_t             subnet_timeout;
 *     uint8_t             init_type_reply;
 *     uint8_t             active_width;
 *     uint8_t             active_speed;
 *     uint8_t             phys_state;
 *     uint8_t             link_layer;
 *     uint8_t             flags;
 *     uint16_t            port_cap_flags2;
 * };
 * </pre>
 *
 * @param state          the logical port state: only ACTIVE ports carry traffic
 * @param maxMtu         largest MTU the port supports
 * @param activeMtu      the MTU in use (the most a connected QP's path MTU may be)
 * @param gidTableLength entries in the GID table
 * @param portCapFlags   {@code enum ibv_port_cap_flags} bits
 * @param maxMessageSize largest message, bytes (unsigned 32 bit)
 * @param pkeyTableLength entries in the P_Key table
 * @param lid            base LID (0 on RoCE)
 * @param smLid          subnet manager LID
 * @param lmc            LID mask control
 * @param maxVlNum       virtual lanes
 * @param activeWidth    link width code
 * @param activeSpeed    link speed code
 * @param physState      physical state (5 = LinkUp)
 * @param linkLayer      {@link #LINK_LAYER_INFINIBAND} or {@link #LINK_LAYER_ETHERNET} (RoCE)
 * @param flags          {@code IBV_QPF_GRH_REQUIRED} etc.
 * @param portCapFlags2  {@code enum ibv_port_cap_flags2} bits
 */
@NativeStruct(value = "struct ibv_port_attr", header = "infiniband/verbs.h")
public record PortAttributes(PortState state, Mtu maxMtu, Mtu activeMtu, int gidTableLength, int portCapFlags,
        long maxMessageSize, int pkeyTableLength, int lid, int smLid, int lmc, int maxVlNum, int activeWidth,
        int activeSpeed, int physState, int linkLayer, int flags, int portCapFlags2) {

    public static final int SIZE = 52;
    @NativeField("state")
    public static final int STATE_OFFSET = 0;
    @NativeField("max_mtu")
    public static final int MAX_MTU_OFFSET = 4;
    @NativeField("active_mtu")
    public static final int ACTIVE_MTU_OFFSET = 8;
    @NativeField("gid_tbl_len")
    public static final int GID_TBL_LEN_OFFSET = 12;
    @NativeField("port_cap_flags")
    public static final int PORT_CAP_FLAGS_OFFSET = 16;
    @NativeField("max_msg_sz")
    public static final int MAX_MSG_SZ_OFFSET = 20;
    @NativeField("bad_pkey_cntr")
    public static final int BAD_PKEY_CNTR_OFFSET = 24;
    @NativeField("qkey_viol_cntr")
    public static final int QKEY_VIOL_CNTR_OFFSET = 28;
    @NativeField("pkey_tbl_len")
    public static final int PKEY_TBL_LEN_OFFSET = 32;
    @NativeField("lid")
    public static final int LID_OFFSET = 34;
    @NativeField("sm_lid")
    public static final int SM_LID_OFFSET = 36;
    @NativeField("lmc")
    public static final int LMC_OFFSET = 38;
    @NativeField("max_vl_num")
    public static final int MAX_VL_NUM_OFFSET = 39;
    @NativeField("sm_sl")
    public static final int SM_SL_OFFSET = 40;
    @NativeField("subnet_timeout")
    public static final int SUBNET_TIMEOUT_OFFSET = 41;
    @NativeField("init_type_reply")
    public static final int INIT_TYPE_REPLY_OFFSET = 42;
    @NativeField("active_width")
    public static final int ACTIVE_WIDTH_OFFSET = 43;
    @NativeField("active_speed")
    public static final int ACTIVE_SPEED_OFFSET = 44;
    @NativeField("phys_state")
    public static final int PHYS_STATE_OFFSET = 45;
    @NativeField("link_layer")
    public static final int LINK_LAYER_OFFSET = 46;
    @NativeField("flags")
    public static final int FLAGS_OFFSET = 47;
    @NativeField("port_cap_flags2")
    public static final int PORT_CAP_FLAGS2_OFFSET = 48;

    public static final int LINK_LAYER_UNSPECIFIED = 0;
    public static final int LINK_LAYER_INFINIBAND = 1;
    public static final int LINK_LAYER_ETHERNET = 2;

    /** Reads a {@code struct ibv_port_attr} at {@code offset}. */
    public static PortAttributes read(ByteBuffer b, int offset) {
        return new PortAttributes(PortState.of(b.getInt(offset + STATE_OFFSET)), Mtu.of(b.getInt(offset + MAX_MTU_OFFSET)),
                Mtu.of(b.getInt(offset + ACTIVE_MTU_OFFSET)), b.getInt(offset + GID_TBL_LEN_OFFSET),
                b.getInt(offset + PORT_CAP_FLAGS_OFFSET), Integer.toUnsignedLong(b.getInt(offset + MAX_MSG_SZ_OFFSET)),
                Short.toUnsignedInt(b.getShort(offset + PKEY_TBL_LEN_OFFSET)),
                Short.toUnsignedInt(b.getShort(offset + LID_OFFSET)),
                Short.toUnsignedInt(b.getShort(offset + SM_LID_OFFSET)), b.get(offset + LMC_OFFSET) & 0xff,
                b.get(offset + MAX_VL_NUM_OFFSET) & 0xff, b.get(offset + ACTIVE_WIDTH_OFFSET) & 0xff,
                b.get(offset + ACTIVE_SPEED_OFFSET) & 0xff, b.get(offset + PHYS_STATE_OFFSET) & 0xff,
                b.get(offset + LINK_LAYER_OFFSET) & 0xff, b.get(offset + FLAGS_OFFSET) & 0xff,
                Short.toUnsignedInt(b.getShort(offset + PORT_CAP_FLAGS2_OFFSET)));
    }

    /** True on RoCE: address vectors then need a GRH ({@code is_global = 1}) with a RoCE GID. */
    public boolean isEthernet() {
        return linkLayer == LINK_LAYER_ETHERNET;
    }
}
