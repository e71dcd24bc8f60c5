package io.reactiverdma.reactive.impl.loopback;

import io.reactiverdma.reactive.impl.verbs.CmChannel;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-JVM RDMA stack: rdma_cm, RC and UD queue pairs (and multicast, {@link LoopbackDatagrams}) on loopback devices, with verbs semantics enforced (keys,
 * bounds, access, queue depths, RNR and transport retries, flushes, completion channel) and faults injected
 * on command ({@link #faults()}). One "wire" thread per stack executes every work request of every device
 * and generates every completion, asynchronously to the posting threads, in order per queue; in zero-cost mode
 * ({@link #zeroCost()}) RC work requests instead execute inside the post, on the posting thread.
 *
 * <p>Shared state (queue pairs, registrations, connections) is guarded by one fabric lock, held briefly;
 * completion queues and event channels have their own locks, taken inside it, never the other way round.
 */
public final class LoopbackStack implements RdmaStack, AutoCloseable {
    private static final AtomicInteger STACKS = new AtomicInteger();

    final Object lock = new Object();
    final String name;
    final LoopbackResources resources;
    final LoopbackFaults faults;
    /** UD delivery, multicast groups and address handles (fabric lock). */
    final LoopbackDatagrams datagrams = new LoopbackDatagrams(this);
    /** The active MTU UDP ids report (rxe on a 1500-byte netdev: 1024). */
    volatile int datagramMtu = 1024;
    final LoopbackMemory memory;
    final LoopbackCm cm;
    final LoopbackWire wire;
    final Duration rnrDelay;
    final Duration ackTimeout;
    /** Whether the devices have type 2 memory windows (ibv_alloc_mw fails with EOPNOTSUPP otherwise). */
    final boolean memoryWindows;
    /** Whether a UD receive's undefined first 20 GRH bytes are garbage (real NICs) rather than zero (rxe). */
    final boolean undefinedGrhBytes;
    /** mlx4/mlx5-like: destroying a QP removes its unpolled completions (see {@link Builder#cleanCqOnDestroy}). */
    final boolean cleanCqOnDestroy;
    /** Posts on RC QPs execute at post time on the posting thread (see {@link Builder#zeroCost}). */
    final boolean zeroCost;
    /** How long after a post the wire executes a send queue ({@link Builder#wireLatency}). */
    final long wireLatencyNs;
    private final List<LoopbackDevice> devices;
    private final Map<InetAddress, LoopbackDevice> byAddress = new LinkedHashMap<>();
    private final ScheduledThreadPoolExecutor executor;
    private final AtomicLong keys = new AtomicLong(0x1000);
    private final AtomicInteger qpNums = new AtomicInteger(0x11);
    private volatile boolean closed;

    private LoopbackStack(Builder b) {
        this.name = "loopback-" + STACKS.incrementAndGet();
        this.resources = new LoopbackResources(name, null);
        this.faults = new LoopbackFaults(this);
        this.memory = new LoopbackMemory(this);
        this.cm = new LoopbackCm(this);
        this.wire = new LoopbackWire(this);
        this.rnrDelay = b.rnrDelay;
        this.ackTimeout = b.ackTimeout;
        this.memoryWindows = b.memoryWindows;
        this.undefinedGrhBytes = b.undefinedGrhBytes;
        this.cleanCqOnDestroy = b.cleanCqOnDestroy;
        this.zeroCost = b.zeroCost;
        this.wireLatencyNs = b.wireLatency.toNanos();
        List<LoopbackDevice> list = new ArrayList<>();
        for (Builder.Spec s : b.devices) {
            LoopbackDevice d = new LoopbackDevice(this, s.name, nextKey(), s.addresses, b.maxCqe, b.maxQpRdAtom);
            list.add(d);
            for (InetAddress a : s.addresses) {
                if (byAddress.putIfAbsent(a, d) != null) {
                    throw new IllegalArgumentException("address " + a + " is on two devices");
                }
            }
        }
        this.devices = Collections.unmodifiableList(list);
        this.executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, name + "-wire");
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
    }

    /** One device "loopback0" on 127.0.0.1 and 10.77.0.1. */
    public static LoopbackStack create() {
        return builder().device("loopback0", "127.0.0.1", "10.77.0.1").build();
    }

    /**
     * One device "loopback0" on 127.0.0.1 and 10.77.0.1 that costs (almost) nothing: see
     * {@link Builder#zeroCost}. For measuring the engine's own CPU per message.
     */
    public static LoopbackStack zeroCost() {
        return builder().device("loopback0", "127.0.0.1", "10.77.0.1").zeroCost(true).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Builds a stack: devices with their addresses, and the (scaled) retry timings. */
    public static final class Builder {
        private record Spec(String name, List<InetAddress> addresses) {
        }

        private final List<Spec> devices = new ArrayList<>();
        private Duration rnrDelay = Duration.ofMillis(1);
        private Duration ackTimeout = Duration.ofMillis(2);
        private int maxCqe = 32767;
        private int maxQpRdAtom = 128;
        private boolean memoryWindows = true;
        private boolean undefinedGrhBytes;
        private boolean cleanCqOnDestroy;
        private boolean zeroCost;
        private Duration wireLatency = Duration.ZERO;

        /** A device with these IP addresses (literal IPv4/IPv6 addresses). */
        public Builder device(String name, String... addresses) {
            List<InetAddress> list = new ArrayList<>();
            for (String a : addresses) {
                try {
                    list.add(InetAddress.getByName(a));
                } catch (UnknownHostException e) {
                    throw new IllegalArgumentException("not an address: " + a, e);
                }
            }
            devices.add(new Spec(name, List.copyOf(list)));
            return this;
        }

        /** Delay before a receiver-not-ready retry (real devices: the RNR NAK timer; default 1 ms). */
        public Builder rnrDelay(Duration d) {
            this.rnrDelay = d;
            return this;
        }

        /** Transport ACK timeout before a retry to a peer that does not answer (default 2 ms). */
        public Builder ackTimeout(Duration d) {
            this.ackTimeout = d;
            return this;
        }

        /** Whether the devices have type 2 memory windows (default true, as rxe and mlx5 have). */
        public Builder memoryWindows(boolean supported) {
            this.memoryWindows = supported;
            return this;
        }

        /**
         * With true, the 20 bytes a RoCEv2/IPv4 UD receive starts with (before the IPv4 header) are garbage
         * beginning with a 6, as real NICs may leave them (they are undefined; rxe zeroes them, so does the
         * loopback by default).
         */
        public Builder undefinedGrhBytes(boolean garbage) {
            this.undefinedGrhBytes = garbage;
            return this;
        }

        /**
         * Behave like the mlx4/mlx5 providers when a QP is destroyed: its completions not polled yet are removed
         * from its CQ ({@code __mlx5_cq_clean}), so receives it consumed from an SRQ are never reported (their
         * SRQ work requests are freed by the provider: gone from the SRQ, and no completion says so). rxe
         * does not clean (default false): a destroyed QP's completions stay in the CQ to be polled. Either way
         * a QP on an SRQ raises {@code QP_LAST_WQE_REACHED} when it enters ERR (after which it consumes no
         * more SRQ receives), as the IB spec requires.
         */
        public Builder cleanCqOnDestroy(boolean clean) {
            this.cleanCqOnDestroy = clean;
            return this;
        }

        /**
         * With true, the stack's RC queue pairs cost (almost) nothing: a work request executes inside
         * {@code ibv_post_send} on the posting thread (the peer's receive matched, the bytes copied once, the
         * completions written into the completion queues' preallocated rings), with no lock, no wire thread and
         * no object per work request; polling reads the ring. Its price: the posting thread must be the
         * poller of both ends' completion queues (one engine, shared completion queues: both ends on one
         * poller), and it does not model RNR or transport retries (such a request fails at once), ordering
         * and timing between QPs, send queue depth, posting before RTS (refused), shared receive queues
         * (refused at rdma_create_qp), cleaning a CQ on destroy, or post, completion and CQ call faults. See
         * {@code ZeroCostQueuePair}. Datagram QPs and rdma_cm keep the ordinary loopback's behaviour.
         */
        public Builder zeroCost(boolean zero) {
            this.zeroCost = zero;
            return this;
        }

        /**
         * How long after a post the wire executes the send queue (default 0: as soon as the wire thread gets to
         * it): a NIC's and the fabric's latency, for a test that needs a completion to come after its poller
         * went to sleep, however the machine's threads are scheduled.
         */
        public Builder wireLatency(Duration latency) {
            this.wireLatency = latency;
            return this;
        }

        public Builder maxCqe(int n) {
            this.maxCqe = n;
            return this;
        }

        public Builder maxQpRdAtom(int n) {
            this.maxQpRdAtom = n;
            return this;
        }

        public LoopbackStack build() {
            if (devices.isEmpty()) {
                throw new IllegalStateException("a loopback stack needs at least one device");
            }
            if (zeroCost && cleanCqOnDestroy) {
                throw new IllegalStateException("a zero-cost loopback stack does not clean completion queues on destroy");
            }
            return new LoopbackStack(this);
        }
    }

    @Override
    public void ensureAvailable() {
        if (closed) {
            throw new io.reactiverdma.reactive.RdmaException("the loopback stack " + name + " was closed");
        }
    }

    @Override
    public CmChannel openCmChannel() {
        ensureAvailable();
        return new LoopbackCmChannel(this);
    }

    @Override
    public String name() {
        return "loopback";
    }

    /** Fault injection on this stack's devices, queue pairs, completion queues and rdma_cm. */
    public LoopbackFaults faults() {
        return faults;
    }

    /** Live resources of the whole stack (per device: {@link LoopbackDevice#resources()}). */
    public LoopbackResources resources() {
        return resources;
    }

    public List<LoopbackDevice> devices() {
        return devices;
    }

    public LoopbackDevice device(String deviceName) {
        for (LoopbackDevice d : devices) {
            if (d.name().equals(deviceName)) {
                return d;
            }
        }
        throw new IllegalArgumentException("no loopback device " + deviceName + " (have " + devices + ")");
    }

    /** The live rdma_cm ids (for tests that inject faults into connections the engine made). */
    /** UD address handles not destroyed yet. */
    public int liveAddressHandles() {
        return datagrams.liveHandles();
    }

    /** Datagrams the loopback "wire" dropped: no receive posted, no such QP, or injected. */
    public long datagramsDropped() {
        synchronized (lock) {
            return datagrams.dropped;
        }
    }

    /** Sets the active MTU that UDP ids report (the largest UD payload). */
    public void datagramMtu(int bytes) {
        datagramMtu = bytes;
    }

    public List<LoopbackCmId> liveIds() {
        return new ArrayList<>(cm.ids);
    }

    /** The live ids bound to an address and nothing more: the engines' device watches (one per device and engine). */
    public List<LoopbackCmId> deviceWatches() {
        List<LoopbackCmId> list = new ArrayList<>();
        for (LoopbackCmId id : cm.ids) {
            if (id.isBoundOnly()) {
                list.add(id);
            }
        }
        return list;
    }

    /** The live ids but the {@link #deviceWatches() device watches}. */
    public List<LoopbackCmId> liveIdsButDeviceWatches() {
        List<LoopbackCmId> list = liveIds();
        list.removeIf(LoopbackCmId::isBoundOnly);
        return list;
    }

    /**
     * Waits (at most {@code timeout}) until nothing is live but the {@code kept} kinds and, of the rdma_cm ids,
     * the engines' device watches (at most one per device and engine, that is rdma_cm channel: an engine keeps
     * one while it holds the device's resources); otherwise throws an {@link AssertionError} listing what is left.
     */
    public void awaitReleasedButDeviceWatches(java.time.Duration timeout, LoopbackResources.Kind... kept) {
        LoopbackResources.Kind[] withIds = java.util.Arrays.copyOf(kept, kept.length + 1);
        withIds[kept.length] = LoopbackResources.Kind.CM_ID;
        long deadline = System.nanoTime() + timeout.toNanos();
        resources.awaitReleased(timeout, withIds);
        while (true) {
            List<LoopbackCmId> others = liveIdsButDeviceWatches();
            List<LoopbackCmId> watches = deviceWatches();
            long watched = watches.stream().map(id -> java.util.List.of(id.channel, id.device())).distinct().count();
            if (others.isEmpty() && watched == watches.size()) {
                return;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("rdma_cm ids still live after " + timeout + " (device watches: "
                        + deviceWatches() + "): " + others);
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted while waiting for the rdma_cm ids to be destroyed");
            }
        }
    }

    /** The live ids made for connect requests (the server sides of connections), oldest first. */
    public List<LoopbackCmId> passiveIds() {
        List<LoopbackCmId> list = new ArrayList<>();
        for (LoopbackCmId id : cm.ids) {
            if (id.isConnectRequest()) {
                list.add(id);
            }
        }
        list.sort(java.util.Comparator.comparingLong(LoopbackCmId::key));
        return list;
    }

    /** Completion-queue overflows seen on any CQ of this stack (each also raised a CQ_ERR async event). */
    public long cqOverflows() {
        long n = 0;
        for (LoopbackDevice d : devices) {
            n += d.cqOverflows();
        }
        return n;
    }

    /** Times a message found no receive posted at its destination (RNR; each retry counts). */
    public long rnrWaits() {
        synchronized (lock) {
            return wire.rnrWaits;
        }
    }

    /** Stops the wire thread; nothing executes afterwards. Idempotent. */
    @Override
    public void close() {
        closed = true;
        executor.shutdownNow();
    }

    LoopbackDevice deviceOf(InetAddress a) {
        return byAddress.get(a);
    }

    boolean isKnown(InetAddress a) {
        return byAddress.containsKey(a);
    }

    long nextKey() {
        return keys.incrementAndGet();
    }

    int nextQpNum() {
        synchronized (givenQpNums) {
            Integer n = givenQpNums.poll();
            if (n != null) {
                qpNums.accumulateAndGet(n + 1, Math::max);
                return n;
            }
        }
        return qpNums.getAndIncrement();
    }

    /** QP numbers the next QPs created take, in order (see {@link LoopbackFaults#nextQpNumbers}). */
    final java.util.ArrayDeque<Integer> givenQpNums = new java.util.ArrayDeque<>();

    /** Runs {@code task} on the wire thread, after {@code delayNs} (0: as soon as possible, FIFO). */
    void schedule(Runnable task, long delayNs) {
        if (closed) {
            return;
        }
        Runnable guarded = () -> {
            try {
                task.run();
            } catch (Throwable t) {
                System.err.println(name + ": a wire task failed: " + t);
                t.printStackTrace();
            }
        };
        try {
            if (delayNs <= 0) {
                executor.execute(guarded);
            } else {
                executor.schedule(guarded, delayNs, TimeUnit.NANOSECONDS);
            }
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
            // closed meanwhile
        }
    }

    @Override
    public String toString() {
        return name + devices;
    }
}
