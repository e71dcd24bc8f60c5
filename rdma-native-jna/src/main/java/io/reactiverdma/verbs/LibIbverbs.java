package io.reactiverdma.verbs;

import com.sun.jna.Function;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import io.reactiverdma.natives.RdmaNative;

/**
 * JNA direct mapping of the functions libibverbs really exports (checked with
 * {@code nm -D libibverbs.so.1}). Every pointer is passed and returned as a {@code long} address, so a call
 * converts nothing and allocates nothing; the wrapper classes of this package turn results into objects
 * and failures into {@link io.reactiverdma.natives.NativeCallException}.
 *
 * <p>What is <em>not</em> here, because verbs.h defines it as a macro or static inline and no library
 * exports it:
 * <ul>
 *   <li>{@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_post_srq_recv}, {@code ibv_poll_cq},
 *       {@code ibv_req_notify_cq}, {@code ibv_alloc_mw}, {@code ibv_dealloc_mw}, {@code ibv_bind_mw}: called
 *       through the provider's function pointers in {@code struct ibv_context_ops} (see
 *       {@link VerbsContext});</li>
 *   <li>{@code ibv_query_port}: a macro for the inline {@code ___ibv_query_port}, which calls
 *       {@code verbs_context->query_port(ctx, port, attr, sizeof(struct ibv_port_attr))} and falls back to
 *       the exported compat {@code ibv_query_port} with a zeroed struct; {@link VerbsContext#queryPort} does
 *       the same;</li>
 *   <li>{@code ibv_reg_mr}: a macro choosing {@code ibv_reg_mr} or {@code ibv_reg_mr_iova2} (when optional
 *       access flags are set); {@link ProtectionDomain#registerMemory} does the same;</li>
 *   <li>{@code ibv_query_gid_ex} / {@code ibv_query_gid_table}: inlines over {@code _ibv_query_gid_ex} /
 *       {@code _ibv_query_gid_table} (IBVERBS_1.11), which are resolved lazily ({@link #optional}) so the
 *       bindings still load on an older rdma-core.</li>
 * </ul>
 *
 * <p>Low-level and unchecked: a wrong address crashes the JVM. Prefer the wrapper classes.
 */
public final class LibIbverbs {
    static {
        Native.register(LibIbverbs.class, RdmaNative.libibverbs());
    }

    private LibIbverbs() {
    }

    /** Loads the library and registers the natives (idempotent). */
    static void load() {
        // class initialisation does the work
    }

    /**
     * An exported function that not every rdma-core version has, as a JNA {@link Function}, or null when
     * this libibverbs lacks it.
     */
    static Function optional(String name) {
        try {
            NativeLibrary lib = RdmaNative.libibverbs();
            return lib.getFunction(name);
        } catch (UnsatisfiedLinkError e) {
            return null;
        }
    }

    // ------------------------------------------------------------------------------------------ devices
    /** {@code struct ibv_device **ibv_get_device_list(int *num_devices)}; NULL and errno on failure. */
    public static native long ibv_get_device_list(int[] numDevices);

    public static native void ibv_free_device_list(long list);

    public static native String ibv_get_device_name(long device);

    /** {@code __be64 ibv_get_device_guid(struct ibv_device *)}: network byte order. */
    public static native long ibv_get_device_guid(long device);

    public static native long ibv_open_device(long device);

    public static native int ibv_close_device(long context);

    public static native int ibv_query_device(long context, long deviceAttr);

    /** The exported compat symbol: fills only the older, shorter {@code struct _compat_ibv_port_attr}. */
    public static native int ibv_query_port(long context, byte portNum, long portAttr);

    public static native int ibv_query_gid(long context, byte portNum, int index, long gid);

    public static native int ibv_query_pkey(long context, byte portNum, int index, long pkeyBe16);

    public static native int ibv_get_async_event(long context, long event);

    public static native void ibv_ack_async_event(long event);

    // --------------------------------------------------------------------------------------- PD and MR
    public static native long ibv_alloc_pd(long context);

    public static native int ibv_dealloc_pd(long pd);

    public static native long ibv_reg_mr(long pd, long addr, long length, int access);

    public static native int ibv_dereg_mr(long mr);

    // ----------------------------------------------------------------------------------- CQ and channel
    public static native long ibv_create_comp_channel(long context);

    public static native int ibv_destroy_comp_channel(long channel);

    public static native long ibv_create_cq(long context, int cqe, long cqContext, long channel, int compVector);

    public static native int ibv_resize_cq(long cq, int cqe);

    public static native int ibv_destroy_cq(long cq);

    public static native int ibv_get_cq_event(long channel, long cqOut, long cqContextOut);

    public static native void ibv_ack_cq_events(long cq, int nevents);

    // ---------------------------------------------------------------------------------------- SRQ / QP
    public static native long ibv_create_srq(long pd, long srqInitAttr);

    public static native int ibv_modify_srq(long srq, long srqAttr, int srqAttrMask);

    public static native int ibv_query_srq(long srq, long srqAttr);

    public static native int ibv_destroy_srq(long srq);

    public static native long ibv_create_qp(long pd, long qpInitAttr);

    public static native int ibv_modify_qp(long qp, long attr, int attrMask);

    public static native int ibv_query_qp(long qp, long attr, int attrMask, long initAttr);

    public static native int ibv_destroy_qp(long qp);

    // ---------------------------------------------------------------------------------------------- AH
    public static native long ibv_create_ah(long pd, long ahAttr);

    public static native int ibv_destroy_ah(long ah);

    public static native int ibv_init_ah_from_wc(long context, byte portNum, long wc, long grh, long ahAttr);

    public static native long ibv_create_ah_from_wc(long pd, long wc, long grh, byte portNum);

    public static native int ibv_attach_mcast(long qp, long gid, short lid);

    public static native int ibv_detach_mcast(long qp, long gid, short lid);

    // ------------------------------------------------------------------------------------------- misc
    public static native int ibv_fork_init();

    public static native String ibv_wc_status_str(int status);

    public static native String ibv_event_type_str(int eventType);

    public static native String ibv_port_state_str(int portState);

    public static native String ibv_node_type_str(int nodeType);

    public static native int ibv_rate_to_mbps(int rate);
}
