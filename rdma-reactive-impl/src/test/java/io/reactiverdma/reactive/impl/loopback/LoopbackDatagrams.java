package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.AddressHandle;
import io.reactiverdma.reactive.impl.verbs.DatagramRoute;
import io.reactiverdma.verbs.AccessFlags;
import io.reactiverdma.verbs.AddressHandleAttributes;
import io.reactiverdma.verbs.Gid;
import io.reactiverdma.verbs.SendWorkRequests;
import io.reactiverdma.verbs.WcFlags;
import io.reactiverdma.verbs.WcOpcode;
import io.reactiverdma.verbs.WcStatus;
import io.reactiverdma.verbs.WrOpcode;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The loopback's unreliable datagrams, with rxe's semantics: a UD send completes once "transmitted" whether or
 * not anyone receives it; a datagram is dropped silently when the destination QP is gone, not UD, has
 * another Q_Key or has no receive posted; a receive gets 40 bytes of GRH (RoCEv2 over IPv4: 20 zero bytes,
 * then an IPv4 header with source and destination address) before the payload, and its completion names
 * the sender's QP. The IPv4 header carries a correct checksum, as on the wire. The 20 bytes before it are
 * undefined on real NICs (they keep whatever the buffer held) and zeroed by rxe; the loopback zeroes them too,
 * unless built with {@link LoopbackStack.Builder#undefinedGrhBytes(boolean)}, which fills them with garbage
 * that starts with a 6 (what an IPv6 GRH starts with) so a receiver that trusts the first nibble misreads
 * the datagram. Multicast: QPs attached to a group (rdma_join_multicast) each get a copy, the sender too
 * when attached (multicast loopback). Fabric lock held for everything but the address-handle registry.
 */
final class LoopbackDatagrams {
    /** {@code RDMA_UDP_QKEY}: the Q_Key of UD QPs and groups of the UDP port space. */
    static final int UDP_QKEY = 0x01234567;
    static final int MULTICAST_QPN = 0xffffff;
    static final int GRH = 40;

    private final LoopbackStack stack;
    private final Map<Integer, LoopbackQueuePair> byQpn = new HashMap<>();
    private final Map<InetAddress, Set<LoopbackQueuePair>> groups = new HashMap<>();
    private final Map<Long, Handle> handles = new ConcurrentHashMap<>();
    /** What fills a GRH's undefined bytes in {@link LoopbackStack.Builder#undefinedGrhBytes(boolean)} mode (fabric lock). */
    private final java.util.Random garbage = new java.util.Random(23);
    /** Datagrams the "fabric" dropped (no receive posted, no such QP, fault injection). */
    long dropped;

    LoopbackDatagrams(LoopbackStack stack) {
        this.stack = stack;
    }

    /** An address handle: the destination IP; its key is what the send request carries as {@code wr.ud.ah}. */
    final class Handle implements AddressHandle {
        final long key = stack.nextKey();
        final InetAddress destination;
        volatile boolean closed;

        Handle(InetAddress destination) {
            this.destination = destination;
            handles.put(key, this);
        }

        @Override
        public void target(SendWorkRequests chain, int i, int remoteQpn, int remoteQkey) {
            int o = (int) (chain.address(i) - chain.address());
            chain.buffer().putLong(o + SendWorkRequests.UD_AH_OFFSET, key);
            chain.buffer().putInt(o + SendWorkRequests.UD_REMOTE_QPN_OFFSET, remoteQpn);
            chain.buffer().putInt(o + SendWorkRequests.UD_REMOTE_QKEY_OFFSET, remoteQkey);
        }

        @Override
        public void close() {
            closed = true;
            handles.remove(key);
        }
    }

    /** Address handles not destroyed yet (leak checks). */
    int liveHandles() {
        return handles.size();
    }

    Handle handle(DatagramRoute route) {
        return new Handle(toAddress(route.attributes().dgid().raw()));
    }

    /** From a receive's GRH: the sender's IPv4 address at 20 + 12. */
    Handle replyHandle(ByteBuffer grh) {
        byte[] ip = new byte[4];
        grh.duplicate().position(32).get(ip);
        return new Handle(toAddress(ip));
    }

    static DatagramRoute route(InetAddress destination, int qpn) {
        return new DatagramRoute(qpn, UDP_QKEY, new AddressHandleAttributes().global(Gid.of(destination), 0).portNum(1));
    }

    private static InetAddress toAddress(byte[] raw) {
        try {
            return InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    void register(LoopbackQueuePair qp) {
        byQpn.put(qp.qpNum(), qp);
    }

    void unregister(LoopbackQueuePair qp) {
        byQpn.remove(qp.qpNum());
        for (Set<LoopbackQueuePair> members : groups.values()) {
            members.remove(qp);
        }
    }

    void attach(InetAddress group, LoopbackQueuePair qp) {
        groups.computeIfAbsent(group, g -> new LinkedHashSet<>()).add(qp);
    }

    boolean detach(InetAddress group, LoopbackQueuePair qp) {
        Set<LoopbackQueuePair> members = groups.get(group);
        return members != null && members.remove(qp);
    }

    /** Executes one UD send of {@code qp}: the payload's length, or null when its SGE is not readable. */
    Integer send(LoopbackQueuePair qp, LoopbackQueuePair.SendWqe w, byte[] data) {
        Handle h = handles.get(w.ahKey());
        if (h == null || h.closed) {
            return null; // a destroyed AH: the device would fault; the loopback fails the request
        }
        InetAddress source = qp.id.local.getAddress();
        List<LoopbackQueuePair> targets = new ArrayList<>();
        if (w.remoteQpn() == MULTICAST_QPN) {
            targets.addAll(groups.getOrDefault(h.destination, Set.of()));
        } else {
            LoopbackQueuePair t = byQpn.get(w.remoteQpn());
            if (t != null && t.id.local != null && t.id.local.getAddress().equals(h.destination)) {
                targets.add(t);
            }
        }
        if (targets.isEmpty()) {
            dropped++;
        }
        for (LoopbackQueuePair t : targets) {
            deliver(qp, t, w, source, h.destination, data);
        }
        return data.length;
    }

    private void deliver(LoopbackQueuePair from, LoopbackQueuePair to, LoopbackQueuePair.SendWqe w, InetAddress source,
            InetAddress destination, byte[] data) {
        LoopbackQueuePair.RecvWqe r = to.rq.peek();
        if (to.state != LoopbackQueuePair.State.RTS || to.dead || w.remoteQkey() != UDP_QKEY || r == null
                || stack.faults.takeDatagramDrop()) {
            dropped++;
            return;
        }
        to.rq.poll();
        if (GRH + data.length > r.length()) {
            complete(to, r.wrId(), WcStatus.LOC_LEN_ERR, 0, 0, 0, from.qpNum());
            return;
        }
        LoopbackRegistration target = stack.memory.local(to.pd, r.lkey(), r.addr(), GRH + data.length,
                AccessFlags.LOCAL_WRITE, new LoopbackMemory.Check[1]);
        if (target == null) {
            complete(to, r.wrId(), WcStatus.LOC_PROT_ERR, 0, 0, 0, from.qpNum());
            return;
        }
        byte[] packet = new byte[GRH + data.length];
        if (stack.undefinedGrhBytes) {
            garbage.nextBytes(packet); // the payload is written over below
            packet[0] = (byte) (0x60 | (packet[0] & 0x0f));
        }
        ipv4Header(packet, 20, packet.length - 20, source, destination);
        System.arraycopy(data, 0, packet, GRH, data.length);
        target.write(r.addr(), packet, packet.length);
        boolean imm = w.opcode() == WrOpcode.SEND_WITH_IMM;
        complete(to, r.wrId(), WcStatus.SUCCESS, packet.length, imm ? w.imm() : 0, (imm ? WcFlags.WITH_IMM : 0) | WcFlags.GRH,
                from.qpNum());
    }

    /** A RoCEv2 IPv4 header (IHL 5, UDP, checksum) of a packet of {@code totalLength} bytes, at {@code at}. */
    private static void ipv4Header(byte[] p, int at, int totalLength, InetAddress source, InetAddress destination) {
        p[at] = 0x45;
        p[at + 1] = 0;
        p[at + 2] = (byte) (totalLength >>> 8);
        p[at + 3] = (byte) totalLength;
        for (int i = 4; i < 8; i++) {
            p[at + i] = 0; // identification, flags, fragment offset
        }
        p[at + 8] = 64; // TTL
        p[at + 9] = 17; // UDP
        System.arraycopy(source.getAddress(), 0, p, at + 12, 4);
        System.arraycopy(destination.getAddress(), 0, p, at + 16, 4);
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            if (i != 10) {
                sum += ((p[at + i] & 0xff) << 8) | (p[at + i + 1] & 0xff);
            }
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        sum = ~sum & 0xffff;
        p[at + 10] = (byte) (sum >>> 8);
        p[at + 11] = (byte) sum;
    }

    private static void complete(LoopbackQueuePair qp, long wrId, WcStatus status, int byteLen, int imm, int flags, int srcQp) {
        qp.cq.push(new LoopbackCompletionQueue.Completion(wrId, status.value(), WcOpcode.RECV.value(),
                status == WcStatus.SUCCESS ? 0 : 0x10, byteLen, imm, flags, srcQp));
    }
}
