package io.reactiverdma.reactive.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.OperationType;
import io.reactiverdma.reactive.RdmaMetricsRecorder;

import java.lang.ref.WeakReference;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The engine's meters ({@code rdma.*}, docs/metrics-reference.md) in one Micrometer {@link MeterRegistry},
 * tagged with the RDMA device ({@code device}) and, when asked for, the peer's IP address ({@code remote}).
 * Use it as {@code client.metrics(true, () -> MicrometerRdmaRecorder.of(registry))}.
 * <p>
 * One recorder per registry (it holds the gauges' values, which every connection recording there shares):
 * {@link #of} returns the same one for the same registry. The registry is held weakly.
 * <p>
 * Remote-address tags are capped: at most {@code maxRemoteAddressTags} distinct peers get their own
 * {@code remote} value, every later one is counted under {@value #OTHER}, so a server with many peers cannot
 * grow a registry without bound. Recording looks meters up in maps and allocates nothing once a device's (and
 * peer's) meters exist.
 * <p>
 * This class, and {@link MicrometerRdmaObserver}, are the only API classes that name Micrometer, an optional
 * dependency of the API module: use them only with {@code micrometer-core} on the class path.
 */
public final class MicrometerRdmaRecorder implements RdmaMetricsRecorder {
    /** The {@code remote} tag value of peers beyond the cap. */
    public static final String OTHER = "other";
    /** The {@code remote} tag value when the engine does not know the peer. */
    public static final String UNKNOWN = "unknown";
    /** The largest cap {@link #of(MeterRegistry, int)} accepts. */
    public static final int MAX_REMOTE_ADDRESS_TAGS = 10_000;

    private static final Map<MeterRegistry, MicrometerRdmaRecorder> BY_REGISTRY =
            Collections.synchronizedMap(new WeakHashMap<>());

    private final WeakReference<MeterRegistry> registry;
    private final int maxRemoteAddressTags;
    private final Map<String, DeviceMeters> devices = new ConcurrentHashMap<>();

    private MicrometerRdmaRecorder(MeterRegistry registry, int maxRemoteAddressTags) {
        this.registry = new WeakReference<>(registry);
        this.maxRemoteAddressTags = maxRemoteAddressTags;
    }

    /** The recorder of {@code registry}: meters tagged with the device only. */
    public static MicrometerRdmaRecorder of(MeterRegistry registry) {
        return of(registry, 0);
    }

    /**
     * The recorder of {@code registry}, meters tagged with the device and, when {@code maxRemoteAddressTags}
     * is positive, the peer's IP address (at most that many distinct ones, then {@value #OTHER}). A registry's
     * meters have one set of tag keys: asking for the same registry with a different cap is refused.
     *
     * @throws InvalidRequestException when the cap is outside 0..{@value #MAX_REMOTE_ADDRESS_TAGS}, or the
     *         registry already has a recorder with another cap
     */
    public static MicrometerRdmaRecorder of(MeterRegistry registry, int maxRemoteAddressTags) {
        Objects.requireNonNull(registry, "registry");
        if (maxRemoteAddressTags < 0 || maxRemoteAddressTags > MAX_REMOTE_ADDRESS_TAGS) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "maxRemoteAddressTags must be 0.." + MAX_REMOTE_ADDRESS_TAGS + ", got " + maxRemoteAddressTags);
        }
        MicrometerRdmaRecorder r = BY_REGISTRY.computeIfAbsent(registry,
                reg -> new MicrometerRdmaRecorder(reg, maxRemoteAddressTags));
        if (r.maxRemoteAddressTags != maxRemoteAddressTags) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "this registry already records rdma meters with maxRemoteAddressTags=" + r.maxRemoteAddressTags
                            + " (its meters have one set of tags), asked for " + maxRemoteAddressTags);
        }
        return r;
    }

    /** How many distinct peers get their own {@code remote} tag (0: no {@code remote} tag). */
    public int maxRemoteAddressTags() {
        return maxRemoteAddressTags;
    }

    @Override
    public void recordOperation(String device, InetSocketAddress remote, OperationType op, Outcome outcome,
            long latencyNanos, long bytes) {
        PeerMeters m = peer(device, remote);
        if (m == null) {
            return;
        }
        m.operations.get(op)[outcome.ordinal()].increment();
        if (outcome == Outcome.SUCCESS) {
            m.latency.get(op).record(latencyNanos, TimeUnit.NANOSECONDS);
            if (bytes > 0) {
                m.bytes.get(op).increment(bytes);
            }
        }
    }

    @Override
    public void recordCompletionError(String device, InetSocketAddress remote, String status) {
        PeerMeters m = peer(device, remote);
        MeterRegistry reg = registry.get();
        if (m == null || reg == null) {
            return;
        }
        // Registered on first use: a status that never happens shows no meter.
        m.errors.computeIfAbsent(status, s -> Counter.builder("rdma.completion.errors")
                .description("failed completions other than flushes, by status").tags(m.tags).tag("status", s)
                .register(reg)).increment();
    }

    @Override
    public void recordPollBatch(String device, int completions) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.batch.record(completions);
        }
    }

    @Override
    public void recordDatagram(String device, DatagramOutcome outcome, long bytes) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.datagrams[outcome.ordinal()].increment();
            if (bytes > 0) {
                d.datagramBytes[outcome.ordinal()].increment(bytes);
            }
        }
    }

    @Override
    public void multicastGroupsChanged(String device, int delta) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.groups.addAndGet(delta);
        }
    }

    @Override
    public void addressHandlesChanged(String device, int delta) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.addressHandles.addAndGet(delta);
        }
    }

    @Override
    public void addressHandleEvicted(String device) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.addressHandlesEvicted.increment();
        }
    }

    @Override
    public void recordStaleCompletion(String device) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.stale.increment();
        }
    }

    @Override
    public void outstandingChanged(String device, InetSocketAddress remote, int delta) {
        PeerMeters m = peer(device, remote);
        if (m != null) {
            m.outstanding.addAndGet(delta);
        }
    }

    @Override
    public void connectionsChanged(String device, InetSocketAddress remote, int delta) {
        PeerMeters m = peer(device, remote);
        if (m != null) {
            m.connections.addAndGet(delta);
        }
    }

    @Override
    public void creditsWaitingChanged(String device, InetSocketAddress remote, int delta) {
        PeerMeters m = peer(device, remote);
        if (m != null) {
            m.creditsWaiting.addAndGet(delta);
        }
    }

    @Override
    public void receiveMemoryChanged(String device, long deltaBytes) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.receiveMemory.addAndGet(deltaBytes);
        }
    }

    @Override
    public void registeredMemoryChanged(String device, long deltaBytes) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.registeredMemory.addAndGet(deltaBytes);
        }
    }

    @Override
    public void slabsReleased(String device, int count) {
        DeviceMeters d = device(device);
        if (d != null) {
            d.slabsReleased.increment(count);
        }
    }

    @Override
    public String toString() {
        return "MicrometerRdmaRecorder{" + registry.get() + ", maxRemoteAddressTags=" + maxRemoteAddressTags + "}";
    }

    /** Null when the registry is gone (collected). */
    private DeviceMeters device(String device) {
        DeviceMeters d = devices.get(device);
        if (d == null) {
            MeterRegistry reg = registry.get();
            if (reg == null) {
                return null;
            }
            d = devices.computeIfAbsent(device, name -> new DeviceMeters(registry, reg, name, maxRemoteAddressTags > 0));
        }
        return d;
    }

    private PeerMeters peer(String device, InetSocketAddress remote) {
        DeviceMeters d = device(device);
        if (d == null) {
            return null;
        }
        if (maxRemoteAddressTags == 0) {
            return d.all;
        }
        InetAddress address = remote == null ? null : remote.getAddress();
        if (address == null) {
            return d.unknown();
        }
        PeerMeters m = d.peers.get(address);
        return m != null ? m : d.admit(address, maxRemoteAddressTags);
    }

    /** A device's poller meters, and its connection meters (one set, or one per admitted peer). */
    private static final class DeviceMeters {
        /** Weak, as the recorder's: a strong one here would keep the registry (the recorders' key) alive. */
        private final WeakReference<MeterRegistry> registry;
        private final String device;
        private final DistributionSummary batch;
        private final Counter stale;
        /** By {@link DatagramOutcome} ordinal: datagrams, and their payload bytes. */
        private final Counter[] datagrams = new Counter[DatagramOutcome.values().length];
        private final Counter[] datagramBytes = new Counter[DatagramOutcome.values().length];
        private final java.util.concurrent.atomic.AtomicInteger groups = new java.util.concurrent.atomic.AtomicInteger();
        final AtomicLong receiveMemory = new AtomicLong();
        final AtomicLong registeredMemory = new AtomicLong();
        final Counter slabsReleased;
        final AtomicLong addressHandles = new AtomicLong();
        final Counter addressHandlesEvicted;
        private final PeerMeters all; // null with remote-address tags
        private final Map<InetAddress, PeerMeters> peers = new ConcurrentHashMap<>();
        private volatile PeerMeters other;
        private volatile PeerMeters unknown;

        /** {@code perPeer}: connection meters per peer only, never the device-wide set (one set of tag keys). */
        DeviceMeters(WeakReference<MeterRegistry> ref, MeterRegistry registry, String device, boolean perPeer) {
            this.registry = ref;
            this.device = device;
            Tags tags = Tags.of("device", device);
            batch = DistributionSummary.builder("rdma.poll.batch").description("completions per non-empty poll")
                    .tags(tags).register(registry);
            stale = Counter.builder("rdma.completions.stale")
                    .description("completions whose wr_id named no live operation").tags(tags).register(registry);
            Gauge.builder("rdma.receive.memory", receiveMemory, AtomicLong::get).baseUnit("bytes")
                    .description("registered memory pinned for receive buffers").tags(tags).register(registry);
            Gauge.builder("rdma.memory.registered", registeredMemory, AtomicLong::get).baseUnit("bytes")
                    .description("memory registered (pinned) by the device's buffer pool: slabs and user registrations")
                    .tags(tags).register(registry);
            slabsReleased = Counter.builder("rdma.memory.slabs.released")
                    .description("idle pool slabs deregistered and freed").tags(tags).register(registry);
            all = perPeer ? null : new PeerMeters(registry, tags);
            for (DatagramOutcome o : DatagramOutcome.values()) {
                datagrams[o.ordinal()] = Counter.builder("rdma.datagrams").description("datagrams by outcome")
                        .tags(tags).tag("outcome", o.tag()).register(registry);
                datagramBytes[o.ordinal()] = Counter.builder("rdma.datagram.bytes").baseUnit("bytes")
                        .description("datagram payload bytes by outcome").tags(tags).tag("outcome", o.tag())
                        .register(registry);
            }
            io.micrometer.core.instrument.Gauge.builder("rdma.multicast.groups", groups, Number::doubleValue)
                    .description("multicast groups joined by datagram endpoints").tags(tags).register(registry);
            Gauge.builder("rdma.datagram.address.handles", addressHandles, AtomicLong::get)
                    .description("address handles held by datagram endpoints").tags(tags).register(registry);
            addressHandlesEvicted = Counter.builder("rdma.datagram.address.handles.evicted")
                    .description("peer address handles evicted by datagram endpoints whose cache was full")
                    .tags(tags).register(registry);
        }

        /** A new peer: its own meters while under the cap, else the shared "other" ones (not cached per peer). */
        synchronized PeerMeters admit(InetAddress address, int cap) {
            PeerMeters m = peers.get(address);
            if (m != null) {
                return m;
            }
            MeterRegistry reg = registry.get();
            if (reg == null) {
                return null;
            }
            if (peers.size() >= cap) {
                if (other == null) {
                    other = new PeerMeters(reg, Tags.of("device", device, "remote", OTHER));
                }
                return other;
            }
            m = new PeerMeters(reg, Tags.of("device", device, "remote", address.getHostAddress()));
            peers.put(address, m);
            return m;
        }

        synchronized PeerMeters unknown() {
            MeterRegistry reg = registry.get();
            if (unknown == null && reg != null) {
                unknown = new PeerMeters(reg, Tags.of("device", device, "remote", UNKNOWN));
            }
            return unknown;
        }
    }

    /** The meters connections record, for one tag set; every op and outcome registered up front. */
    private static final class PeerMeters {
        final Tags tags;
        final Map<OperationType, Counter[]> operations = new EnumMap<>(OperationType.class);
        final Map<OperationType, Counter> bytes = new EnumMap<>(OperationType.class);
        final Map<OperationType, Timer> latency = new EnumMap<>(OperationType.class);
        final Map<String, Counter> errors = new ConcurrentHashMap<>();
        final AtomicLong outstanding = new AtomicLong();
        final AtomicLong connections = new AtomicLong();
        final AtomicLong creditsWaiting = new AtomicLong();

        PeerMeters(MeterRegistry registry, Tags tags) {
            this.tags = tags;
            for (OperationType op : OperationType.values()) {
                Counter[] byOutcome = new Counter[Outcome.values().length];
                for (Outcome o : Outcome.values()) {
                    byOutcome[o.ordinal()] = Counter.builder("rdma.operations").description("work requests completed")
                            .tags(tags).tag("op", op.tag()).tag("outcome", o.tag()).register(registry);
                }
                operations.put(op, byOutcome);
                bytes.put(op, Counter.builder("rdma.bytes").baseUnit("bytes")
                        .description("payload bytes of successful operations").tags(tags).tag("op", op.tag())
                        .register(registry));
                latency.put(op, Timer.builder("rdma.operation.latency").description("time from post to completion")
                        .tags(tags).tag("op", op.tag()).register(registry));
            }
            // The recorder holds the values strongly (Gauge holds its state weakly).
            Gauge.builder("rdma.outstanding", outstanding, AtomicLong::get)
                    .description("work requests posted and not completed").tags(tags).register(registry);
            Gauge.builder("rdma.connections", connections, AtomicLong::get).description("open connections")
                    .tags(tags).register(registry);
            Gauge.builder("rdma.credits.waiting", creditsWaiting, AtomicLong::get)
                    .description("connections whose next message waits for the peer's flow-control credits")
                    .tags(tags).register(registry);
        }
    }
}
