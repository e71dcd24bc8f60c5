package io.reactiverdma.cm;

import com.sun.jna.Native;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.RdmaNative;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One result of {@code rdma_getaddrinfo}, copied out (the native list is freed before returning).
 *
 * @param portSpace   the port space it applies to
 * @param source      the local address to use, or null
 * @param destination the address to connect to (for a passive lookup, the address to bind)
 */
public record RdmaAddrInfo(PortSpace portSpace, InetSocketAddress source, InetSocketAddress destination) {
    static final int RAI_PASSIVE = 1;
    static final int RAI_NUMERICHOST = 2;

    /**
     * rdma_getaddrinfo returns either -1 with errno set (its own checks) or getaddrinfo's EAI_* code (glibc's
     * values, negative; EAI_SYSTEM means errno says more), which is not an errno: reading errno for it named
     * an unrelated error.
     */
    static NativeCallException failure(int rc, int errno, String what) {
        String eai = switch (rc) {
            case -2 -> "EAI_NONAME: name or service not known";
            case -3 -> "EAI_AGAIN: temporary failure in name resolution";
            case -4 -> "EAI_FAIL: non-recoverable failure in name resolution";
            case -5 -> "EAI_NODATA: no address associated with the name";
            case -6 -> "EAI_FAMILY: address family not supported";
            case -7 -> "EAI_SOCKTYPE: socket type not supported";
            case -8 -> "EAI_SERVICE: service not supported for the socket type";
            case -9 -> "EAI_ADDRFAMILY: no address in the requested family";
            case -10 -> "EAI_MEMORY: out of memory";
            case -11 -> null; // EAI_SYSTEM: errno holds the cause
            case -12 -> "EAI_OVERFLOW: argument buffer overflow";
            default -> rc == -1 && errno != 0 ? null : "getaddrinfo code " + rc;
        };
        if (eai == null) {
            return new NativeCallException("rdma_getaddrinfo", errno, what);
        }
        return new NativeCallException("rdma_getaddrinfo", 0, what + ": " + eai);
    }

    /**
     * {@code rdma_getaddrinfo(node, service, hints)} for RDMA_PS_TCP.
     *
     * @param node    host name or numeric address; may be null for a passive lookup
     * @param service port number as text, or null
     * @param passive true to look up an address to bind/listen on (RAI_PASSIVE)
     */
    public static List<RdmaAddrInfo> resolve(String node, String service, boolean passive) {
        if (node == null && service == null) {
            throw new IllegalArgumentException("node and service must not both be null");
        }
        RdmaNative.ensureLibraries();
        ByteBuffer hints = NativeMemory.allocate(CmStructs.AddrInfoLayout.SIZE + 8);
        hints.putInt(CmStructs.AddrInfoLayout.FLAGS_OFFSET, passive ? RAI_PASSIVE : 0);
        hints.putInt(CmStructs.AddrInfoLayout.PORT_SPACE_OFFSET, PortSpace.TCP.value());
        long base = NativeMemory.address(hints);
        int rc = LibRdmacm.rdma_getaddrinfo(node, service, base, base + CmStructs.AddrInfoLayout.SIZE);
        if (rc != 0) {
            int errno = Native.getLastError();
            throw failure(rc, errno, "node " + node + " service " + service);
        }
        long head = hints.getLong(CmStructs.AddrInfoLayout.SIZE);
        List<RdmaAddrInfo> out = new ArrayList<>();
        try {
            for (long ai = head; ai != 0; ) {
                ByteBuffer v = NativeMemory.view(ai, CmStructs.AddrInfoLayout.SIZE);
                out.add(new RdmaAddrInfo(PortSpace.of(v.getInt(CmStructs.AddrInfoLayout.PORT_SPACE_OFFSET)),
                        sockaddr(v.getLong(CmStructs.AddrInfoLayout.SRC_ADDR_OFFSET)),
                        sockaddr(v.getLong(CmStructs.AddrInfoLayout.DST_ADDR_OFFSET))));
                ai = v.getLong(CmStructs.AddrInfoLayout.NEXT_OFFSET);
            }
        } finally {
            LibRdmacm.rdma_freeaddrinfo(head);
            java.lang.ref.Reference.reachabilityFence(hints);
        }
        return out;
    }

    private static InetSocketAddress sockaddr(long address) {
        return address == 0 ? null : SocketAddresses.read(NativeMemory.view(address, CmStructs.SockaddrStorage.SIZE), 0);
    }

    public RdmaAddrInfo {
        Objects.requireNonNull(portSpace, "portSpace");
    }
}
