package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.connection.SharedReceives;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.support.CmEvents;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServerConfig;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A listening rdma_cm id and the connections it accepted: its lifecycle (graceful and immediate shutdown),
 * its events, and its shared receive queue on each device. Each CONNECT_REQUEST is admitted first
 * ({@link AdmissionControl}: checked private data, the connection limit, then the application's acceptor,
 * asynchronously), with nothing allocated; an admitted one is set up ({@link ConnectionSetup}: an
 * {@link EngineConnection} whose QP is created, whose handler is called, and which is then accepted). A
 * request refused anywhere is rejected with a {@link RejectData reason the client reads}.
 */
public final class EngineServer implements DisposableRdmaServer {
    private static final int BACKLOG = 128;

    private final EngineContext engine;
    private final CmEventLoop cm;
    private final RdmaServerConfig config;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;
    private final CmId listener;
    private final InetSocketAddress address;
    private final Set<EngineConnection> connections = ConcurrentHashMap.newKeySet();
    static final int CONNECTION_EVENTS_BUFFER = 4096;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().multicast().directBestEffort();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private final AtomicBoolean disposing = new AtomicBoolean();
    private final AtomicBoolean graceful = new AtomicBoolean();
    /** Checks each connection request before anything is allocated for it (rdma_cm thread). */
    private final AdmissionControl admission;
    /** No request is admitted any more (set on the rdma_cm thread). */
    private volatile boolean stopped;
    /** Completes once {@link #stopped} and no connection is left. */
    private final Sinks.Empty<Void> drained = Sinks.empty();
    /** With SHARED_RECEIVE_QUEUE_DEPTH: this server's SRQ on each device it accepted on (rdma_cm thread). */
    private final Map<DeviceResources, SharedReceives> sharedReceives = new HashMap<>();
    /**
     * SRQs the device reported broken (SRQ_ERR) and replaced: their connections were all failed, but may still
     * be closing on them, so they are given back with the others when the server is done (rdma_cm thread).
     */
    private final List<SharedReceives> brokenSharedReceives = new ArrayList<>();

    /** Binds to {@code address} (resolved before: no lookup on the rdma_cm thread) and listens (rdma_cm thread). */
    public EngineServer(EngineContext engine, CmEventLoop cm, RdmaServerConfig config, InetSocketAddress address,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        this.engine = engine;
        this.cm = cm;
        this.config = config;
        this.handler = handler;
        CmId id = cm.channel().createId(PortSpace.TCP);
        try {
            id.bind(address);
            id.listen(BACKLOG);
        } catch (RuntimeException e) {
            id.close();
            throw e;
        }
        this.listener = id;
        this.address = id.localAddress();
        this.admission = new AdmissionControl("server " + address, config, cm, connections::size,
                new ConnectionSetup("server " + address, engine, cm, config, handler, this::sharedReceives,
                        this::publish, this::opened, this::reject)::setUp, this::publish);
        cm.register(id, this::onListenerEvent);
    }

    private void onListenerEvent(CmEventInfo e) {
        if (e.type() == CmEventType.CONNECT_REQUEST) {
            if (graceful.get()) {
                // a request that reached this thread before the stopListening task queued by disposeGracefully:
                // refused all the same, as the graceful shutdown promises from the moment it is asked for
                stopListening();
            }
            admission.request(e);
            return;
        }
        publish(new ConnectionEvent(CmEvents.map(e.type()), e.status(), e.privateDataTrimmed(), null));
        if (e.type() == CmEventType.DEVICE_REMOVAL) {
            // The listening id's device is gone: this server cannot accept anything any more.
            EngineLog.warn("server " + address + ": its RDMA device was removed; disposing the server");
            engine.deviceRemoved(listener);
            dispose();
        }
    }

    /**
     * This server's SRQ on {@code device}, created (or, in a SHARED_RECEIVE_QUEUE_GROUP, found) with its first
     * connection there; null without SRQ.
     */
    private SharedReceives sharedReceives(DeviceResources device) {
        if (config.option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH) == 0) {
            return null;
        }
        SharedReceives s = sharedReceives.get(device);
        if (s != null && s.isBroken()) {
            // SRQ_ERR failed every connection on it; new ones would join a queue nothing is posted on any more.
            EngineLog.warn("server " + address + ": " + s + " is broken (SRQ_ERR); new connections get a new one");
            sharedReceives.remove(device);
            brokenSharedReceives.add(s);
        }
        return sharedReceives.computeIfAbsent(device, d -> engine.sharedReceiveGroups().acquire(d, config));
    }

    /** Server-level events come from the rdma_cm thread and from each connection's poller: one at a time. */
    private void publish(ConnectionEvent e) {
        synchronized (events) {
            events.tryEmitNext(e);
        }
    }

    /** rdma_cm thread: rejects a request whose set-up failed (see {@link AdmissionControl#reject}). */
    private void reject(CmId child, InetSocketAddress peer, Rejection why, String reason) {
        admission.reject(child, peer, why, reason);
    }

    /** rdma_cm thread: a connection was set up; it counts until its close completes. */
    private void opened(EngineConnection c) {
        connections.add(c);
        c.onDispose().subscribe(null, null, () -> connectionClosed(c));
    }

    private void connectionClosed(EngineConnection c) {
        connections.remove(c);
        if (connections.isEmpty()) {
            if (stopped) {
                drained.tryEmitEmpty();
            }
            if (disposing.get()) {
                finish();
            }
        }
    }

    /**
     * rdma_cm thread: no more requests. The listener is destroyed (new requests find nothing listening) and
     * the requests waiting for the acceptor are rejected.
     */
    private void stopListening() {
        if (stopped) {
            return;
        }
        stopped = true;
        cm.unregister(listener);
        listener.close();
        admission.stop();
        if (connections.isEmpty()) {
            drained.tryEmitEmpty();
        }
    }

    @Override
    public Mono<Void> disposeGracefully(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        return Mono.defer(() -> {
            if (graceful.compareAndSet(false, true)) {
                cm.execute(this::stopListening);
                // Runs whoever subscribes or cancels: the bound ends in dispose() either way.
                drained.asMono().timeout(timeout, Mono.empty()).subscribe(null, err -> dispose(), this::dispose);
            }
            return onDispose();
        });
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public Flux<ConnectionEvent> connectionEvents() {
        // The multicast sink drops for a subscriber without demand; this buffer takes everything so a slow
        // subscriber never misses events silently: past the bound it gets an overflow error instead.
        return events.asFlux().onBackpressureBuffer(CONNECTION_EVENTS_BUFFER);
    }

    @Override
    public int connectionCount() {
        return connections.size();
    }

    @Override
    public Mono<Void> onDispose() {
        return disposed.asMono();
    }

    @Override
    public boolean isDisposed() {
        return disposing.get();
    }

    @Override
    public void dispose() {
        if (!disposing.compareAndSet(false, true)) {
            return; // one caller tears down
        }
        cm.execute(() -> {
            stopListening();
            List<EngineConnection> open = new ArrayList<>(connections);
            if (open.isEmpty()) {
                finish();
            }
            open.forEach(EngineConnection::dispose);
        });
    }

    /** Every connection closed after dispose(): the SRQs go (on the rdma_cm thread), then the server is done. */
    private void finish() {
        cm.execute(() -> {
            List<SharedReceives> srqs = new ArrayList<>(sharedReceives.values());
            srqs.addAll(brokenSharedReceives);
            sharedReceives.clear();
            brokenSharedReceives.clear();
            AtomicInteger left = new AtomicInteger(srqs.size() + 1);
            Runnable oneDone = () -> {
                if (left.decrementAndGet() == 0) {
                    synchronized (events) {
                        events.tryEmitComplete();
                    }
                    disposed.tryEmitEmpty();
                }
            };
            srqs.forEach(s -> engine.sharedReceiveGroups().release(s, oneDone));
            oneDone.run();
        });
    }

    @Override
    public String toString() {
        return "RdmaServer{" + address + ", " + connections.size() + " connections}";
    }
}
