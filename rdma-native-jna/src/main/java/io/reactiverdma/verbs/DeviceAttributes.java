package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

import java.nio.ByteBuffer;

/**
 * A device's attributes and limits, from {@link VerbsContext#queryDevice()}.
 * <pre>
 * struct ibv_device_attr {
 *     char                fw_ver[64];
 *     __be64              node_guid;
 *     __be64              sys_image_guid;
 *     uint64_t            max_mr_size;
 *     uint64_t            page_size_cap;
 *     uint32_t            vendor_id;
 *     uint32_t            vendor_part_id;
 *     uint32_t            hw_ver;
 *     int                 max_qp;
 *     int                 max_qp_wr;
 *     unsigned int        device_cap_flags;
 *     int                 max_sge;
 *     int                 max_sge_rd;
 *     int                 max_cq;
 *     int                 max_cqe;
 *     int                 max_mr;
 *     int                 max_pd;
 *     int                 max_qp_rd_atom;
 *     int                 max_ee_rd_atom;
 *     int                 max_res_rd_atom;
 *     int                 max_qp_init_rd_atom;
 *     int                 max_ee_init_rd_atom;
 *     enum ibv_atomic_cap atomic_cap;
 *     int                 max_ee;
 *     int                 max_rdd;
 *     int                 max_mw;
 *     int                 max_raw_ipv6_qp;
 *     int                 max_raw_ethy_qp;
 *     int                 max_mcast_grp;
 *     int                 max_mcast_qp_attach;
 *     int                 max_total_mcast_qp_attach;
 *     int                 max_ah;
 *     int                 max_fmr;
 *     int                 max_map_per_fmr;
 *     int                 max_srq;
 *     int                 max_srq_wr;
 *     int                 max_srq_sge;
 *     uint16_t            max_pkeys;
 *     uint8_t             local_ca_ack_delay;
 *     uint8_t             phys_port_cnt;
 * };
 * </pre>
 * GUIDs are converted to host order (print with {@link VerbsDevice#formatGuid(long)}).
 *
 * @param firmwareVersion   fw_ver
 * @param nodeGuid          node GUID, host order
 * @param sysImageGuid      system image GUID, host order
 * @param maxMrSize         largest MR, bytes (unsigned)
 * @param pageSizeCap       supported page sizes (bit mask)
 * @param vendorId          IEEE vendor id
 * @param vendorPartId      vendor part id
 * @param hardwareVersion   hardware version
 * @param maxQp             QPs
 * @param maxQpWr           work requests per queue
 * @param deviceCapFlags    {@code enum ibv_device_cap_flags} bits (see the {@code CAP_*} constants)
 * @param maxSge            scatter/gather entries per send/receive WR
 * @param maxSgeRd          scatter entries per RDMA READ
 * @param maxCq             CQs
 * @param maxCqe            entries per CQ
 * @param maxMr             MRs
 * @param maxPd             PDs
 * @param maxQpRdAtom       outstanding RDMA READ/atomic per QP as responder
 * @param maxResRdAtom      responder resources in total
 * @param maxQpInitRdAtom   outstanding RDMA READ/atomic per QP as initiator
 * @param atomicCap         0 none, 1 HCA, 2 global
 * @param maxMw             memory windows
 * @param maxMcastGroups    multicast groups
 * @param maxAh             address handles
 * @param maxSrq            SRQs
 * @param maxSrqWr          work requests per SRQ
 * @param maxSrqSge         scatter entries per SRQ WR
 * @param maxPkeys          P_Key table size
 * @param localCaAckDelay   local CA ACK delay
 * @param physPortCount     number of ports (numbered from 1)
 */
@NativeStruct(value = "struct ibv_device_attr", header = "infiniband/verbs.h")
public record DeviceAttributes(String firmwareVersion, long nodeGuid, long sysImageGuid, long maxMrSize,
        long pageSizeCap, int vendorId, int vendorPartId, int hardwareVersion, int maxQp, int maxQpWr,
        int deviceCapFlags, int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
        int maxResRdAtom, int maxQpInitRdAtom, int atomicCap, int maxMw, int maxMcastGroups, int maxAh, int maxSrq,
        int maxSrqWr, int maxSrqSge, int maxPkeys, int localCaAckDelay, int physPortCount) {

    public static final int SIZE = 232;
    @NativeField("fw_ver")
    public static final int FW_VER_OFFSET = 0;
    public static final int FW_VER_LENGTH = 64;
    @NativeField("node_guid")
    public static final int NODE_GUID_OFFSET = 64;
    @NativeField("sys_image_guid")
    public static final int SYS_IMAGE_GUID_OFFSET = 72;
    @NativeField("max_mr_size")
    public static final int MAX_MR_SIZE_OFFSET = 80;
    @NativeField("page_size_cap")
    public static final int PAGE_SIZE_CAP_OFFSET = 88;
    @NativeField("vendor_id")
    public static final int VENDOR_ID_OFFSET = 96;
    @NativeField("vendor_part_id")
    public static final int VENDOR_PART_ID_OFFSET = 100;
    @NativeField("hw_ver")
    public static final int HW_VER_OFFSET = 104;
    @NativeField("max_qp")
    public static final int MAX_QP_OFFSET = 108;
    @NativeField("max_qp_wr")
    public static final int MAX_QP_WR_OFFSET = 112;
    @NativeField("device_cap_flags")
    public static final int DEVICE_CAP_FLAGS_OFFSET = 116;
    @NativeField("max_sge")
    public static final int MAX_SGE_OFFSET = 120;
    @NativeField("max_sge_rd")
    public static final int MAX_SGE_RD_OFFSET = 124;
    @NativeField("max_cq")
    public static final int MAX_CQ_OFFSET = 128;
    @NativeField("max_cqe")
    public static final int MAX_CQE_OFFSET = 132;
    @NativeField("max_mr")
    public static final int MAX_MR_OFFSET = 136;
    @NativeField("max_pd")
    public static final int MAX_PD_OFFSET = 140;
    @NativeField("max_qp_rd_atom")
    public static final int MAX_QP_RD_ATOM_OFFSET = 144;
    @NativeField("max_res_rd_atom")
    public static final int MAX_RES_RD_ATOM_OFFSET = 152;
    @NativeField("max_qp_init_rd_atom")
    public static final int MAX_QP_INIT_RD_ATOM_OFFSET = 156;
    @NativeField("atomic_cap")
    public static final int ATOMIC_CAP_OFFSET = 164;
    @NativeField("max_mw")
    public static final int MAX_MW_OFFSET = 176;
    @NativeField("max_mcast_grp")
    public static final int MAX_MCAST_GRP_OFFSET = 188;
    @NativeField("max_ah")
    public static final int MAX_AH_OFFSET = 200;
    @NativeField("max_srq")
    public static final int MAX_SRQ_OFFSET = 212;
    @NativeField("max_srq_wr")
    public static final int MAX_SRQ_WR_OFFSET = 216;
    @NativeField("max_srq_sge")
    public static final int MAX_SRQ_SGE_OFFSET = 220;
    @NativeField("max_pkeys")
    public static final int MAX_PKEYS_OFFSET = 224;
    @NativeField("local_ca_ack_delay")
    public static final int LOCAL_CA_ACK_DELAY_OFFSET = 226;
    @NativeField("phys_port_cnt")
    public static final int PHYS_PORT_CNT_OFFSET = 227;

    /** {@code IBV_DEVICE_SRQ_RESIZE}. */
    public static final int CAP_SRQ_RESIZE = 1 << 13;
    /** {@code IBV_DEVICE_MEM_WINDOW}. */
    public static final int CAP_MEM_WINDOW = 1 << 17;
    /** {@code IBV_DEVICE_MEM_MGT_EXTENSIONS}. */
    public static final int CAP_MEM_MGT_EXTENSIONS = 1 << 21;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A}. */
    public static final int CAP_MEM_WINDOW_TYPE_2A = 1 << 23;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2B}. */
    public static final int CAP_MEM_WINDOW_TYPE_2B = 1 << 24;

    /** Reads a {@code struct ibv_device_attr} at {@code offset}. */
    public static DeviceAttributes read(ByteBuffer b, int o) {
        return new DeviceAttributes(Buffers.cString(b, o + FW_VER_OFFSET, FW_VER_LENGTH),
                Buffers.getLongBE(b, o + NODE_GUID_OFFSET), Buffers.getLongBE(b, o + SYS_IMAGE_GUID_OFFSET),
                b.getLong(o + MAX_MR_SIZE_OFFSET), b.getLong(o + PAGE_SIZE_CAP_OFFSET), b.getInt(o + VENDOR_ID_OFFSET),
                b.getInt(o + VENDOR_PART_ID_OFFSET), b.getInt(o + HW_VER_OFFSET), b.getInt(o + MAX_QP_OFFSET),
                b.getInt(o + MAX_QP_WR_OFFSET), b.getInt(o + DEVICE_CAP_FLAGS_OFFSET), b.getInt(o + MAX_SGE_OFFSET),
                b.getInt(o + MAX_SGE_RD_OFFSET), b.getInt(o + MAX_CQ_OFFSET), b.getInt(o + MAX_CQE_OFFSET),
                b.getInt(o + MAX_MR_OFFSET), b.getInt(o + MAX_PD_OFFSET), b.getInt(o + MAX_QP_RD_ATOM_OFFSET),
                b.getInt(o + MAX_RES_RD_ATOM_OFFSET), b.getInt(o + MAX_QP_INIT_RD_ATOM_OFFSET),
                b.getInt(o + ATOMIC_CAP_OFFSET), b.getInt(o + MAX_MW_OFFSET), b.getInt(o + MAX_MCAST_GRP_OFFSET),
                b.getInt(o + MAX_AH_OFFSET), b.getInt(o + MAX_SRQ_OFFSET), b.getInt(o + MAX_SRQ_WR_OFFSET),
                b.getInt(o + MAX_SRQ_SGE_OFFSET), Short.toUnsignedInt(b.getShort(o + MAX_PKEYS_OFFSET)),
                b.get(o + LOCAL_CA_ACK_DELAY_OFFSET) & 0xff, b.get(o + PHYS_PORT_CNT_OFFSET) & 0xff);
    }

    /** True when the device has all of the given {@code CAP_*} bits. */
    public boolean has(int capFlags) {
        return (deviceCapFlags & capFlags) == capFlags;
    }
}
