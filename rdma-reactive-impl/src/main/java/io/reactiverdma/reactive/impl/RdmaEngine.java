package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.cm.BindHandover;
import io.reactiverdma.reactive.impl.cm.ClientConnector;
import io.reactiverdma.reactive.impl.cm.ConnectParams;
import io.reactiverdma.reactive.impl.cm.EngineContext;
import io.reactiverdma.reactive.impl.cm.EngineObservations;
import io.reactiverdma.reactive.impl.cm.CmEventLoop;
import io.reactiverdma.reactive.impl.cm.DeviceLookup;
import io.reactiverdma.reactive.impl.cm.DeviceWatch;
import io.reactiverdma.reactive.impl.cm.EngineServer;
import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.device.PoolRelease;
import io.reactiverdma.reactive.impl.support.EngineLog;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DeviceEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.RdmaDatagramConfig;
import io.reactiverdma.reactive.RdmaServerConfig;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.verbs.Device;
import io.reactiverdma.reactive.impl.verbs.RdmaStack;
import io.reactiverdma.reactive.impl.verbs.jna.JnaRdmaStack;
import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.annotation.Nullable;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The provider: connect, bind, the devices' events and shutdown, over one {@link RdmaStack}. It keeps the
 * engine's shared resources (one rdma_cm event loop, per device a {@link DeviceResources}), created on first
 * use and released by {@link #shutdown()} (or, for one device, when it fails or is removed). Found by the
 * API through {@link java.util.ServiceLoader}.
 */
public final class RdmaEngine implements RdmaTransportProvider, EngineContext {
    /** How long shutdown waits for connections and servers to close before it releases what is left. */
    static final Duration SHUTDOWN_CLOSE_TIMEOUT = Duration.ofSeconds(10);
    /** How long the engine keeps letting go of a removed device the stack still lists. */
    static final Duration REMOVED_DEVICE_LET_GO = Duration.ofSeconds(60);
    static final Duration REMOVED_DEVICE_RECHECK = Duration.ofMillis(500);

    private final RdmaStack stack;
    private final PoolRelease poolRelease;
    private final Object lock = new Object();
    private CmEventLoop cmLoop;
    private final Map<Long, DeviceResources> devices = new ConcurrentHashMap<>();
    /** What tells the engine of a device's removal when nothing else is open on it, by device key. */
    private final Map<Long, DeviceWatch> watches = new ConcurrentHashMap<>();
    private final Set<EngineConnection> connections = ConcurrentHashMap.newKeySet();
    private final Set<EngineServer> servers = ConcurrentHashMap.newKeySet();
    private final Set<io.reactiverdma.reactive.impl.datagram.EngineDatagramEndpoint> datagramEndpoints =
            ConcurrentHashMap.newKeySet();
    /** Connect attempts not finished yet (shutdown fails them). */
    private final Set<ClientConnector> attempts = ConcurrentHashMap.newKeySet();
    /** The shutdown under way, which a second call joins; null when none is. */
    private Mono<Void> shuttingDown;
    private final Sinks.Many<DeviceEvent> deviceEvents = Sinks.many().multicast().directBestEffort();

    /** For {@link java.util.ServiceLoader}: the engine on rdma-core (libibverbs, librdmacm). */
    public RdmaEngine() {
        this(new JnaRdmaStack());
    }

    /** An engine on {@code stack} (the loopback device in host tests). */
    public RdmaEngine(RdmaStack stack) {
        this(stack, PoolRelease.fromSystemProperties());
    }

    /** An engine on {@code stack} whose devices' buffer pools give idle slabs back as {@code poolRelease} says. */
    public RdmaEngine(RdmaStack stack, PoolRelease poolRelease) {
        this.stack = Objects.requireNonNull(stack, "stack");
        this.poolRelease = Objects.requireNonNull(poolRelease, "poolRelease");
    }

    CmEventLoop cm() {
        synchronized (lock) {
            if (cmLoop == null) {
                stack.ensureAvailable();
                cmLoop = new CmEventLoop(stack.openCmChannel(), "rdma-cm-events");
            }
            return cmLoop;
        }
    }

    private final io.reactiverdma.reactive.impl.connection.SharedReceiveGroups sharedReceiveGroups =
            new io.reactiverdma.reactive.impl.connection.SharedReceiveGroups();

    @Override
    public io.reactiverdma.reactive.impl.connection.SharedReceiveGroups sharedReceiveGroups() {
        return sharedReceiveGroups;
    }

    /** The resources of {@code id}'s device, created on first use, watched through its local address. */
    @Override
    public DeviceResources device(io.reactiverdma.reactive.impl.verbs.CmId id) {
        InetSocketAddress local = id.localAddress();
        return device(id.device(), local == null ? null : local.getAddress());
    }

    /**
     * The resources of {@code device}, created on first use (rdma_cm thread), with a {@link DeviceWatch} through
     * {@code address} (when there is one) for as long as the engine keeps them: it hears of the device's removal
     * even with nothing else open there.
     */
    private DeviceResources device(Device device, @Nullable InetAddress address) {
        DeviceResources known = devices.get(device.key());
        if (known != null) {
            return known;
        }
        CmEventLoop cm;
        synchronized (lock) { // not inside computeIfAbsent: a shutdown clears the map under this lock
            cm = cmLoop; // null once a shutdown began: it releases these resources anyway
        }
        return devices.computeIfAbsent(device.key(), k -> {
            DeviceResources r = new DeviceResources(device, poolRelease);
            r.startAsyncEvents(this::publish, () -> retire(k, DeviceEvent.Type.DEVICE_FATAL),
                    () -> retire(k, DeviceEvent.Type.DEVICE_REMOVED));
            if (cm != null && address != null && !address.isAnyLocalAddress()) {
                DeviceWatch w = DeviceWatch.start(cm, device, address, () -> retire(k, DeviceEvent.Type.DEVICE_REMOVED));
                if (w != null) {
                    watches.put(k, w);
                }
            }
            return r;
        });
    }

    private void publish(DeviceEvent e) {
        synchronized (deviceEvents) {
            deviceEvents.tryEmitNext(e);
        }
    }

    @Override
    public void track(ClientConnector attempt) {
        attempts.add(attempt);
    }

    @Override
    public void untrack(ClientConnector attempt) {
        attempts.remove(attempt);
    }

    /** rdma_cm reported DEVICE_REMOVAL on {@code id} (a listener, or an attempt before its connection). */
    @Override
    public void deviceRemoved(io.reactiverdma.reactive.impl.verbs.CmId id) {
        try {
            retire(id.device().key(), DeviceEvent.Type.DEVICE_REMOVED);
        } catch (RuntimeException notBound) {
            // the id never reached a device: nothing of it to release
        }
    }

    /** A connection exists (connecting or accepted): shutdown closes it. */
    @Override
    public void track(EngineConnection c) {
        connections.add(c);
        c.onDispose().subscribe(null, null, () -> connections.remove(c));
    }

    /**
     * The device failed or was removed: its connections fail, and once they are closed its resources are
     * released; the next connection through it makes new ones.
     */
    void retire(long deviceKey, DeviceEvent.Type why) {
        DeviceResources r = devices.remove(deviceKey);
        if (r == null) {
            return;
        }
        unwatch(deviceKey);
        if (why == DeviceEvent.Type.DEVICE_REMOVED) {
            publish(new DeviceEvent(r.context().name(), why, -1));
        }
        List<Mono<Void>> closing = new ArrayList<>();
        for (EngineConnection c : new ArrayList<>(connections)) {
            if (c.device() != r) {
                continue;
            }
            c.closeFromAnyThread(new io.reactiverdma.reactive.ConnectionClosedException(c.description() + ": its device "
                    + r.context().name() + " " + (why == DeviceEvent.Type.DEVICE_FATAL ? "failed" : "was removed")));
            closing.add(c.onDispose());
        }
        for (var d : new ArrayList<>(datagramEndpoints)) {
            if (d.device() == r) {
                d.dispose();
                closing.add(d.onDispose());
            }
        }
        Mono.when(closing).timeout(SHUTDOWN_CLOSE_TIMEOUT, Mono.empty()).subscribe(null, null, () -> {
            releaseDevice(r);
            if (why == DeviceEvent.Type.DEVICE_REMOVED) {
                letGoOfRemoved(r.context(), System.nanoTime() + REMOVED_DEVICE_LET_GO.toNanos());
            }
        });
    }

    /**
     * Lets go of a removed device's context until the stack no longer lists the device: the kernel may still
     * list it for a moment after rdma_cm reported the removal, and it finishes removing it (rxe) only once
     * every process closed the context. Gives up after {@link #REMOVED_DEVICE_LET_GO}.
     */
    private void letGoOfRemoved(Device device, long deadline) {
        try {
            if (stack.releaseRemoved(device)) {
                return;
            }
        } catch (RuntimeException e) {
            EngineLog.error("letting go of the removed device " + device.name() + " failed", e);
            return;
        }
        if (System.nanoTime() - deadline < 0) {
            EngineTimer.schedule(() -> letGoOfRemoved(device, deadline), REMOVED_DEVICE_RECHECK);
        } else {
            EngineLog.warn("the removed device " + device.name() + " is still listed " + REMOVED_DEVICE_LET_GO.toSeconds()
                    + " s after its removal: its context stays open");
        }
    }

    private void unwatch(long deviceKey) {
        DeviceWatch w = watches.remove(deviceKey);
        if (w != null) {
            w.close();
        }
    }

    private static void releaseDevice(DeviceResources r) {
        try {
            r.close();
        } catch (RuntimeException e) {
            EngineLog.error("releasing the resources of " + r.context().name() + " failed", e);
        }
    }

    @Override
    public Mono<RdmaConnection> connect(RdmaClientConfig config) {
        return EngineObservations.connect(config, ConnectParams.clientAddresses(config).flatMap(to -> Mono.<RdmaConnection>create(sink -> {
            CmEventLoop cm = cm();
            ClientConnector attempt = new ClientConnector(this, cm, config, to, sink);
            track(attempt);
            sink.onCancel(() -> {
                if (attempt.handover.compareAndSet(ClientConnector.PENDING, ClientConnector.CANCELLED)) {
                    cm.execute(attempt::abandon);
                }
            });
            cm.execute(attempt::start);
        })));
    }

    @Override
    public Mono<DisposableRdmaServer> bind(RdmaServerConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return ConnectParams.listenAddress(config).onErrorMap(e -> !(e instanceof RdmaException), e -> new RdmaException(
                "cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage(), e))
                .flatMap(address -> BindHandover.on(this::cm, cm -> {
            EngineServer server = new EngineServer(this, cm, config, address, handler);
            servers.add(server);
            server.onDispose().subscribe(null, null, () -> servers.remove(server));
            return EngineObservations.watch(config, server);
        }, e -> e instanceof RdmaException ? e : new RdmaException("cannot listen on " + config.host() + ":"
                + config.port() + ": " + e.getMessage(), e)));
    }

    @Override
    public Mono<RdmaMemory> memory(String addressOrDevice) {
        Objects.requireNonNull(addressOrDevice, "addressOrDevice");
        return DeviceLookup.target(stack, addressOrDevice).flatMap(target -> Mono.<RdmaMemory>create(sink -> {
            CmEventLoop cm = cm();
            cm.execute(() -> {
                try {
                    DeviceLookup.Found found = DeviceLookup.find(cm, target);
                    InetAddress watchThrough = found.address() != null || devices.containsKey(found.device().key())
                            ? found.address() : DeviceLookup.addressOf(cm, found.device()); // a name: look once
                    sink.success(device(found.device(), watchThrough).pool);
                } catch (RuntimeException e) {
                    sink.error(e instanceof RdmaException ? e : new RdmaException("cannot open the RDMA device of "
                            + addressOrDevice + ": " + e.getMessage(), e));
                }
            });
        }));
    }

    /**
     * Connects with {@code config}'s shared settings and a client's defaults for the rest: for code (the
     * engine's tests among it) that keeps one role-less configuration for both ends.
     */
    public Mono<RdmaConnection> connect(RdmaTransportConfig config) {
        return connect(RdmaClientConfig.of(config));
    }

    /** Binds with {@code config}'s shared settings and a server's defaults for the rest (see {@link #connect(RdmaTransportConfig)}). */
    public Mono<DisposableRdmaServer> bind(RdmaTransportConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return bind(RdmaServerConfig.of(config), handler);
    }

    /** Opens a datagram endpoint with {@code config}'s shared settings (see {@link #connect(RdmaTransportConfig)}). */
    public Mono<io.reactiverdma.reactive.RdmaDatagramEndpoint> bindDatagram(RdmaTransportConfig config) {
        return bindDatagram(RdmaDatagramConfig.of(config));
    }

    @Override
    public Mono<io.reactiverdma.reactive.RdmaDatagramEndpoint> bindDatagram(RdmaDatagramConfig config) {
        return ConnectParams.listenAddress(config).onErrorMap(e -> new RdmaException("cannot bind a datagram endpoint: host "
                + config.host() + " does not resolve", e)).flatMap(local -> BindHandover.on(this::cm, cm -> {
            var endpoint = io.reactiverdma.reactive.impl.datagram.EngineDatagramEndpoint.open(this, cm, config, local);
            datagramEndpoints.add(endpoint);
            endpoint.onDispose().subscribe(null, null, () -> datagramEndpoints.remove(endpoint));
            return endpoint;
        }, e -> e)).flatMap(endpoint -> endpoint.receivesPosted()
                // Emitted once its first receives are posted: a datagram sent to it right after finds one.
                // A bind cancelled or failed meanwhile lets the endpoint go.
                .thenReturn((io.reactiverdma.reactive.RdmaDatagramEndpoint) endpoint)
                .doOnCancel(endpoint::dispose)
                .doOnError(e -> endpoint.dispose()));
    }

    @Override
    public Flux<DeviceEvent> deviceEvents() {
        return deviceEvents.asFlux().onBackpressureBuffer(256, dropped -> { }, reactor.core.publisher.BufferOverflowStrategy.DROP_OLDEST);
    }

    @Override
    public Mono<Void> shutdown() {
        return Mono.defer(() -> {
            synchronized (lock) {
                if (shuttingDown == null) {
                    shuttingDown = release().doFinally(s -> {
                        synchronized (lock) {
                            shuttingDown = null;
                        }
                    }).cache();
                }
                return shuttingDown;
            }
        });
    }

    /** Under {@link #lock}: everything open is closed, then everything held is released. */
    private Mono<Void> release() {
        {
            CmEventLoop cm;
            List<DeviceResources> held;
            List<Mono<Void>> closing = new ArrayList<>();
            {
                cm = cmLoop;
                cmLoop = null;
                if (cm != null) {
                    for (ClientConnector a : new ArrayList<>(attempts)) {
                        cm.execute(a::shutDown);
                    }
                }
                for (EngineServer s : new ArrayList<>(servers)) {
                    s.dispose();
                    closing.add(s.onDispose());
                }
                for (EngineConnection c : new ArrayList<>(connections)) {
                    c.dispose();
                    closing.add(c.onDispose());
                }
                for (var d : new ArrayList<>(datagramEndpoints)) {
                    d.dispose();
                    closing.add(d.onDispose());
                }
                held = new ArrayList<>(devices.values());
                devices.clear();
                new ArrayList<>(watches.keySet()).forEach(this::unwatch); // before the loop stops: it destroys them
            }
            return Mono.when(closing)
                    .timeout(SHUTDOWN_CLOSE_TIMEOUT, Mono.fromRunnable(() -> EngineLog.warn("engine shutdown: "
                            + connections.size() + " connections and " + servers.size() + " servers did not close within "
                            + SHUTDOWN_CLOSE_TIMEOUT + "; releasing the rest anyway")))
                    .then(Mono.fromRunnable(() -> {
                        held.forEach(RdmaEngine::releaseDevice);
                        if (cm != null) {
                            cm.stop();
                        }
                    }));
        }
    }
}
