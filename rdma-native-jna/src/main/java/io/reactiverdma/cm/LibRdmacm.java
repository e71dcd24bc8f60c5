package io.reactiverdma.cm;

import com.sun.jna.Native;
import io.reactiverdma.natives.RdmaNative;

/**
 * JNA direct mapping of the librdmacm functions these bindings use (all exported: {@code nm -D
 * librdmacm.so.1}). Pointers travel as {@code long} addresses. Calls return 0 or a pointer on success and
 * -1 / NULL with errno set on failure; the wrapper classes turn that into
 * {@link io.reactiverdma.natives.NativeCallException}. {@code rdma_get_local_addr}/{@code rdma_get_peer_addr}
 * are static inlines in rdma_cma.h ({@code &id->route.addr.src_addr}): {@link RdmaCmId} reads the id.
 *
 * <p>Low-level and unchecked: a wrong address crashes the JVM. Use {@link EventChannel} and {@link RdmaCmId}.
 */
final class LibRdmacm {
    static {
        Native.register(LibRdmacm.class, RdmaNative.librdmacm());
    }

    private LibRdmacm() {
    }

    static native long rdma_create_event_channel();

    /** {@code struct ibv_context **rdma_get_devices(int *num_devices)}: NULL-terminated, free with rdma_free_devices. */
    static native long rdma_get_devices(long numDevicesOut);

    static native void rdma_free_devices(long list);

    static native void rdma_destroy_event_channel(long channel);

    static native int rdma_create_id(long channel, long idOut, long context, int ps);

    static native int rdma_destroy_id(long id);

    static native int rdma_bind_addr(long id, long addr);

    static native int rdma_resolve_addr(long id, long src, long dst, int timeoutMs);

    static native int rdma_resolve_route(long id, int timeoutMs);

    static native int rdma_create_qp(long id, long pd, long qpInitAttr);

    static native void rdma_destroy_qp(long id);

    static native int rdma_connect(long id, long connParam);

    static native int rdma_listen(long id, int backlog);

    static native int rdma_accept(long id, long connParam);

    static native int rdma_reject(long id, long privateData, byte privateDataLen);

    static native int rdma_disconnect(long id);

    static native int rdma_get_cm_event(long channel, long eventOut);

    static native int rdma_ack_cm_event(long event);

    static native String rdma_event_str(int event);

    static native int rdma_migrate_id(long id, long channel);

    static native int rdma_set_option(long id, int level, int optname, long optval, long optlen);

    static native int rdma_join_multicast(long id, long addr, long context);

    static native int rdma_leave_multicast(long id, long addr);

    static native int rdma_getaddrinfo(String node, String service, long hints, long resOut);

    static native void rdma_freeaddrinfo(long res);

    static native short rdma_get_src_port(long id);

    static native short rdma_get_dst_port(long id);

    // libc, for waiting on the event channel's fd with a timeout.
    static final class LibC {
        static {
            Native.register(LibC.class, "c");
        }

        static final short POLLIN = 0x001;
        static final int F_GETFL = 3;
        static final int F_SETFL = 4;
        static final int O_NONBLOCK = 04000;

        private LibC() {
        }

        static native int poll(long fds, long nfds, int timeoutMillis);

        static native int fcntl(int fd, int cmd, int arg);
    }
}
