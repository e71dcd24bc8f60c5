package io.reactiverdma.cm;

import com.sun.jna.Native;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.NativeResource;
import io.reactiverdma.natives.RdmaNative;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An rdma_cm event channel ({@code rdma_create_event_channel}): the queue on which librdmacm reports what
 * happens to the {@link RdmaCmId ids} created on it. Its fd is non-blocking, so {@link #getEvent(Duration)}
 * waits with a timeout (poll(2)) instead of blocking forever.
 *
 * <p>Closing the channel closes its ids first (each destroying its QP first), then destroys the channel.
 * One thread at a time reads events.
 */
public final class EventChannel extends NativeResource {
    private final long address;
    private final int fd;
    private final Map<Long, RdmaCmId> ids = new ConcurrentHashMap<>();
    private final ByteBuffer scratch = NativeMemory.allocate(16);

    private EventChannel(long address) {
        super("rdma_event_channel 0x" + Long.toHexString(address), null);
        this.address = address;
        this.fd = NativeMemory.view(address, CmStructs.EventChannelLayout.SIZE)
                .getInt(CmStructs.EventChannelLayout.FD_OFFSET);
    }

    /** {@code rdma_create_event_channel}, with its fd made non-blocking. */
    public static EventChannel create() {
        RdmaNative.ensureLibraries();
        long ch = LibRdmacm.rdma_create_event_channel();
        if (ch == 0) {
            int errno = Native.getLastError();
            throw new NativeCallException("rdma_create_event_channel", errno,
                    errno == Errno.ENOENT || errno == Errno.ENODEV
                            ? "no /dev/infiniband/rdma_cm: is the rdma_ucm kernel module loaded?" : null);
        }
        EventChannel channel = new EventChannel(ch);
        try {
            int flags = LibRdmacm.LibC.fcntl(channel.fd, LibRdmacm.LibC.F_GETFL, 0);
            if (flags < 0 || LibRdmacm.LibC.fcntl(channel.fd, LibRdmacm.LibC.F_SETFL,
                    flags | LibRdmacm.LibC.O_NONBLOCK) < 0) {
                throw new NativeCallException("fcntl(O_NONBLOCK)", Native.getLastError(), channel.description());
            }
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        return channel;
    }

    /** The {@code struct rdma_event_channel *} address. */
    public long address() {
        beginCall();
        try {
            return address;
        } finally {
            endCall();
        }
    }

    /** The channel's file descriptor (non-blocking), for use with an external poller. */
    public int fd() {
        beginCall();
        try {
            return fd;
        } finally {
            endCall();
        }
    }

    void register(RdmaCmId id) {
        ids.put(id.address(), id);
    }

    void unregister(RdmaCmId id, long idAddress) {
        ids.remove(idAddress, id);
    }

    /**
     * The next event, waiting at most {@code timeout}; null when none arrived in time. The event is copied
     * and acknowledged before it is returned. For CONNECT_REQUEST, {@link CmEvent#id()} is a new
     * {@link RdmaCmId} on this channel that the caller owns.
     *
     * @throws NativeCallException   when rdma_get_cm_event or poll fails
     * @throws io.reactiverdma.natives.ClosedResourceException when the channel is closed
     */
    public CmEvent getEvent(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative, got " + timeout);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        beginCall(); // the poll waits at most the timeout, so a close from another thread waits at most that too
        try {
            while (true) {
                long a = NativeMemory.address(scratch);
                int rc = LibRdmacm.rdma_get_cm_event(address, a);
                if (rc == 0) {
                    long event = scratch.getLong(0);
                    Reference.reachabilityFence(scratch);
                    return consume(event);
                }
                int errno = Native.getLastError();
                if (errno != Errno.EAGAIN && errno != Errno.EINTR) {
                    throw new NativeCallException("rdma_get_cm_event", errno, description());
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                awaitReadable(left);
            }
        } finally {
            endCall();
        }
    }

    /** Waits (without a time limit) for the next event. Prefer {@link #getEvent(Duration)}. */
    public CmEvent getEvent() {
        CmEvent e;
        do {
            e = getEvent(Duration.ofSeconds(3600));
        } while (e == null);
        return e;
    }

    private void awaitReadable(long nanos) {
        scratch.putInt(8, fd);
        scratch.putShort(12, LibRdmacm.LibC.POLLIN);
        scratch.putShort(14, (short) 0);
        int ms = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
        int rc = LibRdmacm.LibC.poll(NativeMemory.address(scratch) + 8, 1, ms);
        Reference.reachabilityFence(scratch);
        if (rc < 0) {
            int errno = Native.getLastError();
            if (errno != Errno.EINTR) {
                throw new NativeCallException("poll", errno, description());
            }
        }
    }

    private CmEvent consume(long event) {
        long refused = 0; // a connect request's new id nobody can own (this channel began closing)
        try {
            ByteBuffer e = NativeMemory.view(event, CmStructs.CmEventLayout.SIZE);
            CmEventType type = CmEventType.of(e.getInt(CmStructs.CmEventLayout.EVENT_OFFSET));
            long idAddress = e.getLong(CmStructs.CmEventLayout.ID_OFFSET);
            long listenAddress = e.getLong(CmStructs.CmEventLayout.LISTEN_ID_OFFSET);
            RdmaCmId listenId = listenAddress == 0 ? null : ids.get(listenAddress);
            RdmaCmId id = ids.get(idAddress);
            if (id == null && type == CmEventType.CONNECT_REQUEST && idAddress != 0) {
                PortSpace ps = listenId != null ? listenId.portSpace() : PortSpace.TCP;
                try {
                    id = RdmaCmId.adoptRequest(this, idAddress, ps);
                } catch (io.reactiverdma.natives.ClosedResourceException closing) {
                    refused = idAddress;
                    throw closing;
                }
            }
            boolean ud = id != null ? id.portSpace() == PortSpace.UDP || id.portSpace() == PortSpace.IPOIB
                    : false;
            return CmEvent.read(e, id, listenId, ud || type == CmEventType.MULTICAST_JOIN
                    || type == CmEventType.MULTICAST_ERROR);
        } finally {
            int rc = LibRdmacm.rdma_ack_cm_event(event);
            if (refused != 0) {
                // after the ack: rdma_destroy_id waits for the id's events to be acknowledged
                LibRdmacm.rdma_reject(refused, 0L, (byte) 0);
                LibRdmacm.rdma_destroy_id(refused);
            }
            if (rc != 0) {
                throw new NativeCallException("rdma_ack_cm_event", Native.getLastError(), description());
            }
        }
    }

    @Override
    protected void release() {
        LibRdmacm.rdma_destroy_event_channel(address);
    }
}
