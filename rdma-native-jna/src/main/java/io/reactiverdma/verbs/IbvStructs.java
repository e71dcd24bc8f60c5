package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeField;
import io.reactiverdma.natives.NativeStruct;

/**
 * Layouts (x86-64 / LP64 {@code sizeof} and {@code offsetof} values) of the libibverbs structs this package
 * reads but does not wrap in a flyweight of its own: the objects libibverbs allocates (context, QP, CQ, MR
 * ...). The flyweights and value types carry their own layouts ({@link WorkCompletions},
 * {@link SendWorkRequests}, {@link QpAttributes} ...). {@code StructLayoutTest} checks every constant against
 * the installed {@code <infiniband/verbs.h>} with a C compiler.
 */
public final class IbvStructs {
    private IbvStructs() {
    }

    static final String VERBS_H = "infiniband/verbs.h";

    /**
     * <pre>
     * struct ibv_context {
     *     struct ibv_device      *device;
     *     struct ibv_context_ops  ops;      // provider function pointers: poll_cq, post_send ...
     *     int                     cmd_fd;
     *     int                     async_fd;
     *     int                     num_comp_vectors;
     *     pthread_mutex_t         mutex;
     *     void                   *abi_compat; // (void *)UINTPTR_MAX when this is a struct verbs_context
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_context", header = VERBS_H)
    public static final class IbvContext {
        public static final int SIZE = 328;
        @NativeField("device")
        public static final int DEVICE_OFFSET = 0;
        @NativeField("ops.alloc_mw")
        public static final int OPS_ALLOC_MW_OFFSET = 64;
        @NativeField("ops.bind_mw")
        public static final int OPS_BIND_MW_OFFSET = 72;
        @NativeField("ops.dealloc_mw")
        public static final int OPS_DEALLOC_MW_OFFSET = 80;
        @NativeField("ops.poll_cq")
        public static final int OPS_POLL_CQ_OFFSET = 96;
        @NativeField("ops.req_notify_cq")
        public static final int OPS_REQ_NOTIFY_CQ_OFFSET = 104;
        @NativeField("ops.post_srq_recv")
        public static final int OPS_POST_SRQ_RECV_OFFSET = 168;
        @NativeField("ops.post_send")
        public static final int OPS_POST_SEND_OFFSET = 208;
        @NativeField("ops.post_recv")
        public static final int OPS_POST_RECV_OFFSET = 216;
        @NativeField("cmd_fd")
        public static final int CMD_FD_OFFSET = 264;
        @NativeField("async_fd")
        public static final int ASYNC_FD_OFFSET = 268;
        @NativeField("num_comp_vectors")
        public static final int NUM_COMP_VECTORS_OFFSET = 272;
        @NativeField("abi_compat")
        public static final int ABI_COMPAT_OFFSET = 320;

        private IbvContext() {
        }
    }

    /**
     * The extended context the provider allocates around {@code struct ibv_context} (which is its last
     * member); found with {@code verbs_get_ctx()}: {@code (struct verbs_context *)((uint8_t *)ctx -
     * offsetof(struct verbs_context, context))}, valid when {@code ctx->abi_compat == (void *)UINTPTR_MAX}.
     * <pre>
     * struct verbs_context {
     *     int (*query_port)(struct ibv_context *context, uint8_t port_num,
     *                       struct ibv_port_attr *port_attr, size_t port_attr_len);
     *     ...                   // grows up: newer ops are added at the start
     *     size_t   sz;          // must be immediately before struct ibv_context
     *     struct ibv_context context;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct verbs_context", header = VERBS_H)
    public static final class VerbsContextLayout {
        public static final int SIZE = 648;
        @NativeField("query_port")
        public static final int QUERY_PORT_OFFSET = 0;
        @NativeField("sz")
        public static final int SZ_OFFSET = 312;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 320;

        private VerbsContextLayout() {
        }
    }

    /**
     * <pre>
     * struct ibv_device {
     *     struct _ibv_device_ops _ops;
     *     enum ibv_node_type     node_type;
     *     enum ibv_transport_type transport_type;
     *     char name[IBV_SYSFS_NAME_MAX];       // e.g. "rxe0"
     *     char dev_name[IBV_SYSFS_NAME_MAX];   // e.g. "uverbs0"
     *     char dev_path[IBV_SYSFS_PATH_MAX];
     *     char ibdev_path[IBV_SYSFS_PATH_MAX];
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_device", header = VERBS_H)
    public static final class IbvDevice {
        public static final int SIZE = 664;
        @NativeField("node_type")
        public static final int NODE_TYPE_OFFSET = 16;
        @NativeField("transport_type")
        public static final int TRANSPORT_TYPE_OFFSET = 20;
        @NativeField("name")
        public static final int NAME_OFFSET = 24;
        @NativeField("dev_name")
        public static final int DEV_NAME_OFFSET = 88;
        @NativeField("dev_path")
        public static final int DEV_PATH_OFFSET = 152;
        @NativeField("ibdev_path")
        public static final int IBDEV_PATH_OFFSET = 408;

        private IbvDevice() {
        }
    }

    /**
     * <pre>
     * struct ibv_pd {
     *     struct ibv_context *context;
     *     uint32_t            handle;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_pd", header = VERBS_H)
    public static final class IbvPd {
        public static final int SIZE = 16;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 8;

        private IbvPd() {
        }
    }

    /**
     * <pre>
     * struct ibv_mr {
     *     struct ibv_context *context;
     *     struct ibv_pd      *pd;
     *     void               *addr;
     *     size_t              length;
     *     uint32_t            handle;
     *     uint32_t            lkey;
     *     uint32_t            rkey;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_mr", header = VERBS_H)
    public static final class IbvMr {
        public static final int SIZE = 48;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("pd")
        public static final int PD_OFFSET = 8;
        @NativeField("addr")
        public static final int ADDR_OFFSET = 16;
        @NativeField("length")
        public static final int LENGTH_OFFSET = 24;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 32;
        @NativeField("lkey")
        public static final int LKEY_OFFSET = 36;
        @NativeField("rkey")
        public static final int RKEY_OFFSET = 40;

        private IbvMr() {
        }
    }

    /**
     * <pre>
     * struct ibv_mw {
     *     struct ibv_context *context;
     *     struct ibv_pd      *pd;
     *     uint32_t            rkey;
     *     uint32_t            handle;
     *     enum ibv_mw_type    type;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_mw", header = VERBS_H)
    public static final class IbvMw {
        public static final int SIZE = 32;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("pd")
        public static final int PD_OFFSET = 8;
        @NativeField("rkey")
        public static final int RKEY_OFFSET = 16;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 20;
        @NativeField("type")
        public static final int TYPE_OFFSET = 24;

        private IbvMw() {
        }
    }

    /**
     * <pre>
     * struct ibv_mw_bind_info {
     *     struct ibv_mr *mr;
     *     uint64_t       addr;
     *     uint64_t       length;
     *     unsigned int   mw_access_flags;
     * };
     * struct ibv_mw_bind {
     *     uint64_t                wr_id;
     *     unsigned int            send_flags;
     *     struct ibv_mw_bind_info bind_info;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_mw_bind", header = VERBS_H)
    public static final class IbvMwBind {
        public static final int SIZE = 48;
        @NativeField("wr_id")
        public static final int WR_ID_OFFSET = 0;
        @NativeField("send_flags")
        public static final int SEND_FLAGS_OFFSET = 8;
        @NativeField("bind_info.mr")
        public static final int BIND_INFO_MR_OFFSET = 16;
        @NativeField("bind_info.addr")
        public static final int BIND_INFO_ADDR_OFFSET = 24;
        @NativeField("bind_info.length")
        public static final int BIND_INFO_LENGTH_OFFSET = 32;
        @NativeField("bind_info.mw_access_flags")
        public static final int BIND_INFO_MW_ACCESS_FLAGS_OFFSET = 40;

        private IbvMwBind() {
        }
    }

    /**
     * <pre>
     * struct ibv_comp_channel {
     *     struct ibv_context *context;
     *     int                 fd;
     *     int                 refcnt;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_comp_channel", header = VERBS_H)
    public static final class IbvCompChannel {
        public static final int SIZE = 16;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("fd")
        public static final int FD_OFFSET = 8;
        @NativeField("refcnt")
        public static final int REFCNT_OFFSET = 12;

        private IbvCompChannel() {
        }
    }

    /**
     * <pre>
     * struct ibv_cq {
     *     struct ibv_context      *context;
     *     struct ibv_comp_channel *channel;
     *     void                    *cq_context;
     *     uint32_t                 handle;
     *     int                      cqe;
     *     pthread_mutex_t          mutex;
     *     pthread_cond_t           cond;
     *     uint32_t                 comp_events_completed;
     *     uint32_t                 async_events_completed;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_cq", header = VERBS_H)
    public static final class IbvCq {
        public static final int SIZE = 128;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("channel")
        public static final int CHANNEL_OFFSET = 8;
        @NativeField("cq_context")
        public static final int CQ_CONTEXT_OFFSET = 16;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 24;
        @NativeField("cqe")
        public static final int CQE_OFFSET = 28;

        private IbvCq() {
        }
    }

    /**
     * <pre>
     * struct ibv_srq {
     *     struct ibv_context *context;
     *     void               *srq_context;
     *     struct ibv_pd      *pd;
     *     uint32_t            handle;
     *     pthread_mutex_t     mutex;
     *     pthread_cond_t      cond;
     *     uint32_t            events_completed;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_srq", header = VERBS_H)
    public static final class IbvSrq {
        public static final int SIZE = 128;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("srq_context")
        public static final int SRQ_CONTEXT_OFFSET = 8;
        @NativeField("pd")
        public static final int PD_OFFSET = 16;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 24;

        private IbvSrq() {
        }
    }

    /**
     * <pre>
     * struct ibv_srq_init_attr {
     *     void               *srq_context;
     *     struct ibv_srq_attr attr;   // max_wr, max_sge, srq_limit
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_srq_init_attr", header = VERBS_H)
    public static final class IbvSrqInitAttr {
        public static final int SIZE = 24;
        @NativeField("srq_context")
        public static final int SRQ_CONTEXT_OFFSET = 0;
        @NativeField("attr")
        public static final int ATTR_OFFSET = 8;
        @NativeField("attr.max_wr")
        public static final int ATTR_MAX_WR_OFFSET = 8;
        @NativeField("attr.max_sge")
        public static final int ATTR_MAX_SGE_OFFSET = 12;
        @NativeField("attr.srq_limit")
        public static final int ATTR_SRQ_LIMIT_OFFSET = 16;

        private IbvSrqInitAttr() {
        }
    }

    /**
     * <pre>
     * struct ibv_qp {
     *     struct ibv_context *context;
     *     void               *qp_context;
     *     struct ibv_pd      *pd;
     *     struct ibv_cq      *send_cq;
     *     struct ibv_cq      *recv_cq;
     *     struct ibv_srq     *srq;
     *     uint32_t            handle;
     *     uint32_t            qp_num;
     *     enum ibv_qp_state   state;
     *     enum ibv_qp_type    qp_type;
     *     pthread_mutex_t     mutex;
     *     pthread_cond_t      cond;
     *     uint32_t            events_completed;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_qp", header = VERBS_H)
    public static final class IbvQp {
        public static final int SIZE = 160;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("qp_context")
        public static final int QP_CONTEXT_OFFSET = 8;
        @NativeField("pd")
        public static final int PD_OFFSET = 16;
        @NativeField("send_cq")
        public static final int SEND_CQ_OFFSET = 24;
        @NativeField("recv_cq")
        public static final int RECV_CQ_OFFSET = 32;
        @NativeField("srq")
        public static final int SRQ_OFFSET = 40;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 48;
        @NativeField("qp_num")
        public static final int QP_NUM_OFFSET = 52;
        @NativeField("state")
        public static final int STATE_OFFSET = 56;
        @NativeField("qp_type")
        public static final int QP_TYPE_OFFSET = 60;

        private IbvQp() {
        }
    }

    /**
     * <pre>
     * struct ibv_ah {
     *     struct ibv_context *context;
     *     struct ibv_pd      *pd;
     *     uint32_t            handle;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_ah", header = VERBS_H)
    public static final class IbvAh {
        public static final int SIZE = 24;
        @NativeField("context")
        public static final int CONTEXT_OFFSET = 0;
        @NativeField("pd")
        public static final int PD_OFFSET = 8;
        @NativeField("handle")
        public static final int HANDLE_OFFSET = 16;

        private IbvAh() {
        }
    }

    /**
     * The Global Route Header that precedes every UD receive: the first 40 bytes of the receive buffer hold
     * it (valid when the completion has {@link WcFlags#GRH}); on RoCEv2 it holds the IPv4 header instead,
     * in its last 20 bytes.
     * <pre>
     * struct ibv_grh {
     *     __be32        version_tclass_flow;
     *     __be16        paylen;
     *     uint8_t       next_hdr;
     *     uint8_t       hop_limit;
     *     union ibv_gid sgid;
     *     union ibv_gid dgid;
     * };
     * </pre>
     */
    @NativeStruct(value = "struct ibv_grh", header = VERBS_H)
    public static final class IbvGrh {
        public static final int SIZE = 40;
        @NativeField("version_tclass_flow")
        public static final int VERSION_TCLASS_FLOW_OFFSET = 0;
        @NativeField("paylen")
        public static final int PAYLEN_OFFSET = 4;
        @NativeField("next_hdr")
        public static final int NEXT_HDR_OFFSET = 6;
        @NativeField("hop_limit")
        public static final int HOP_LIMIT_OFFSET = 7;
        @NativeField("sgid")
        public static final int SGID_OFFSET = 8;
        @NativeField("dgid")
        public static final int DGID_OFFSET = 24;

        private IbvGrh() {
        }
    }
}
