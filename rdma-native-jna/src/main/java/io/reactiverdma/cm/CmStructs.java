package io.reactiverdma.cm;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

/** Layouts of the librdmacm and socket structs these bindings read and write (checked by StructLayoutTest). */
final class CmStructs {
    private CmStructs() {
    }

    /**
     * <pre>
     * struct rdma_cm_id {
     *     struct ibv_context *verbs; struct rdma_event_channel *channel; void *context; struct ibv_qp *qp;
     *     struct rdma_route route;    // route.addr.src_addr / dst_addr: sockaddr unions of 128 bytes
     *     enum rdma_port_space ps; uint8_t port_num; struct rdma_cm_event *event;
     *     struct ibv_comp_channel *send_cq_channel; struct ibv_cq *send_cq;
     *     struct ibv_comp_channel *recv_cq_channel; struct ibv_cq *recv_cq;
     *     struct ibv_srq *srq; struct ibv_pd *pd; enum ibv_qp_type qp_type;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct rdma_cm_id", header = "rdma/rdma_cma.h")
    static final class CmId {
        static final int SIZE = 416;
        @NativeField("verbs")
        static final int VERBS_OFFSET = 0;
        @NativeField("channel")
        static final int CHANNEL_OFFSET = 8;
        @NativeField("qp")
        static final int QP_OFFSET = 24;
        @NativeField("route.addr.src_addr")
        static final int SRC_ADDR_OFFSET = 32;
        @NativeField("route.addr.dst_addr")
        static final int DST_ADDR_OFFSET = 160;
        @NativeField("ps")
        static final int PS_OFFSET = 344;
        @NativeField("port_num")
        static final int PORT_NUM_OFFSET = 348;

        private CmId() {
        }
    }

    /**
     * <pre>
     * struct rdma_cm_event {
     *     struct rdma_cm_id *id; struct rdma_cm_id *listen_id; enum rdma_cm_event_type event; int status;
     *     union { struct rdma_conn_param conn; struct rdma_ud_param ud; } param;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct rdma_cm_event", header = "rdma/rdma_cma.h")
    static final class CmEventLayout {
        static final int SIZE = 80;
        @NativeField("id")
        static final int ID_OFFSET = 0;
        @NativeField("listen_id")
        static final int LISTEN_ID_OFFSET = 8;
        @NativeField("event")
        static final int EVENT_OFFSET = 16;
        @NativeField("status")
        static final int STATUS_OFFSET = 20;
        @NativeField("param.conn")
        static final int PARAM_CONN_OFFSET = 24;
        @NativeField("param.ud")
        static final int PARAM_UD_OFFSET = 24;

        private CmEventLayout() {
        }
    }

    /**
     * <pre>
     * struct rdma_conn_param {
     *     const void *private_data; uint8_t private_data_len; uint8_t responder_resources;
     *     uint8_t initiator_depth; uint8_t flow_control; uint8_t retry_count; uint8_t rnr_retry_count;
     *     uint8_t srq; uint32_t qp_num;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct rdma_conn_param", header = "rdma/rdma_cma.h")
    static final class ConnParamLayout {
        static final int SIZE = 24;
        @NativeField("private_data")
        static final int PRIVATE_DATA_OFFSET = 0;
        @NativeField("private_data_len")
        static final int PRIVATE_DATA_LEN_OFFSET = 8;
        @NativeField("responder_resources")
        static final int RESPONDER_RESOURCES_OFFSET = 9;
        @NativeField("initiator_depth")
        static final int INITIATOR_DEPTH_OFFSET = 10;
        @NativeField("flow_control")
        static final int FLOW_CONTROL_OFFSET = 11;
        @NativeField("retry_count")
        static final int RETRY_COUNT_OFFSET = 12;
        @NativeField("rnr_retry_count")
        static final int RNR_RETRY_COUNT_OFFSET = 13;
        @NativeField("srq")
        static final int SRQ_OFFSET = 14;
        @NativeField("qp_num")
        static final int QP_NUM_OFFSET = 16;

        private ConnParamLayout() {
        }
    }

    /**
     * <pre>
     * struct rdma_ud_param {
     *     const void *private_data; uint8_t private_data_len; struct ibv_ah_attr ah_attr;
     *     uint32_t qp_num; uint32_t qkey;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct rdma_ud_param", header = "rdma/rdma_cma.h")
    static final class UdParamLayout {
        static final int SIZE = 56;
        @NativeField("private_data")
        static final int PRIVATE_DATA_OFFSET = 0;
        @NativeField("private_data_len")
        static final int PRIVATE_DATA_LEN_OFFSET = 8;
        @NativeField("ah_attr")
        static final int AH_ATTR_OFFSET = 16;
        @NativeField("qp_num")
        static final int QP_NUM_OFFSET = 48;
        @NativeField("qkey")
        static final int QKEY_OFFSET = 52;

        private UdParamLayout() {
        }
    }

    /** <pre>struct rdma_event_channel { int fd; };</pre> */
    @NativeStruct(value = "struct rdma_event_channel", header = "rdma/rdma_cma.h")
    static final class EventChannelLayout {
        static final int SIZE = 4;
        @NativeField("fd")
        static final int FD_OFFSET = 0;

        private EventChannelLayout() {
        }
    }

    /**
     * <pre>
     * struct rdma_addrinfo {
     *     int ai_flags; int ai_family; int ai_qp_type; int ai_port_space;
     *     socklen_t ai_src_len; socklen_t ai_dst_len; struct sockaddr *ai_src_addr; struct sockaddr *ai_dst_addr;
     *     char *ai_src_canonname; char *ai_dst_canonname; size_t ai_route_len; void *ai_route;
     *     size_t ai_connect_len; void *ai_connect; struct rdma_addrinfo *ai_next;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct rdma_addrinfo", header = "rdma/rdma_cma.h")
    static final class AddrInfoLayout {
        static final int SIZE = 96;
        @NativeField("ai_flags")
        static final int FLAGS_OFFSET = 0;
        @NativeField("ai_family")
        static final int FAMILY_OFFSET = 4;
        @NativeField("ai_qp_type")
        static final int QP_TYPE_OFFSET = 8;
        @NativeField("ai_port_space")
        static final int PORT_SPACE_OFFSET = 12;
        @NativeField("ai_src_len")
        static final int SRC_LEN_OFFSET = 16;
        @NativeField("ai_dst_len")
        static final int DST_LEN_OFFSET = 20;
        @NativeField("ai_src_addr")
        static final int SRC_ADDR_OFFSET = 24;
        @NativeField("ai_dst_addr")
        static final int DST_ADDR_OFFSET = 32;
        @NativeField("ai_next")
        static final int NEXT_OFFSET = 88;

        private AddrInfoLayout() {
        }
    }

    /** <pre>struct sockaddr_in { sa_family_t sin_family; in_port_t sin_port; struct in_addr sin_addr; ... };</pre> */
    @NativeStruct(value = "struct sockaddr_in", header = "netinet/in.h")
    static final class SockaddrIn {
        static final int SIZE = 16;
        @NativeField("sin_family")
        static final int FAMILY_OFFSET = 0;
        @NativeField("sin_port")
        static final int PORT_OFFSET = 2;
        @NativeField("sin_addr")
        static final int ADDR_OFFSET = 4;

        private SockaddrIn() {
        }
    }

    /**
     * <pre>
     * struct sockaddr_in6 { sa_family_t sin6_family; in_port_t sin6_port; uint32_t sin6_flowinfo;
     *                       struct in6_addr sin6_addr; uint32_t sin6_scope_id; };
     * </pre>
     */
    @NativeStruct(value = "struct sockaddr_in6", header = "netinet/in.h")
    static final class SockaddrIn6 {
        static final int SIZE = 28;
        @NativeField("sin6_family")
        static final int FAMILY_OFFSET = 0;
        @NativeField("sin6_port")
        static final int PORT_OFFSET = 2;
        @NativeField("sin6_flowinfo")
        static final int FLOWINFO_OFFSET = 4;
        @NativeField("sin6_addr")
        static final int ADDR_OFFSET = 8;
        @NativeField("sin6_scope_id")
        static final int SCOPE_ID_OFFSET = 24;

        private SockaddrIn6() {
        }
    }

    /** <pre>struct sockaddr_storage { ... 128 bytes ... };</pre> */
    @NativeStruct(value = "struct sockaddr_storage", header = "sys/socket.h")
    static final class SockaddrStorage {
        static final int SIZE = 128;
        @NativeField("ss_family")
        static final int FAMILY_OFFSET = 0;

        private SockaddrStorage() {
        }
    }
}
