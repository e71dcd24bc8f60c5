package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.ConnectionHandle;
import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.connection.SharedReceives;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.support.CmEvents;
import io.reactiverdma.reactive.impl.support.EngineLog;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import static io.reactiverdma.natives.Errno.EINVAL;

/**
 * A listening rdma_cm id. Each CONNECT_REQUEST becomes an {@link EngineConnection} whose QP is created, whose
 * handler is called (so it can ask for receives before the peer may send), and which is then accepted;
 * when creating it or calling the handler fails, the request is rejected.
 */
public final class EngineServer implements DisposableRdmaServer {
    private static final int BACKLOG = 128;

    private final EngineContext engine;
    private final CmEventLoop cm;
    private final RdmaTransportConfig config;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;
    private final CmId listener;
    private final InetSocketAddress address;
    private final Set<EngineConnection> connections = ConcurrentHashMap.newKeySet();
    static final int CONNECTION_EVENTS_BUFFER = 4096;
    private final Sinks.Many<ConnectionEvent> events = Sinks.many().multicast().directBestEffort();
    private final Sinks.Empty<Void> disposed = Sinks.empty();
    private final java.util.concurrent.atomic.AtomicBoolean disposing = new java.util.concurrent.atomic.AtomicBoolean();
    /** With SHARED_RECEIVE_QUEUE_DEPTH: this server's SRQ on each device it accepted on (rdma_cm thread). */
    private final java.util.Map<DeviceResources, SharedReceives> sharedReceives = new java.util.HashMap<>();

    /** Binds and listens (rdma_cm thread). */
    public EngineServer(EngineContext engine, CmEventLoop cm, RdmaTransportConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        this.engine = engine;
        this.cm = cm;
        this.config = config;
        this.handler = handler;
        CmId id = cm.channel().createId(PortSpace.TCP);
        try {
            id.bind(ConnectParams.address(config));
            id.listen(BACKLOG);
        } catch (RuntimeException e) {
            id.close();
            throw e;
        }
        this.listener = id;
        this.address = id.localAddress();
        cm.register(id, this::onListenerEvent);
    }

    private void onListenerEvent(CmEventInfo e) {
        if (e.type() != CmEventType.CONNECT_REQUEST) {
            publish(new ConnectionEvent(CmEvents.map(e.type()), e.status(), e.privateDataTrimmed(), null));
            if (e.type() == CmEventType.DEVICE_REMOVAL) {
                // The listening id's device is gone: this server cannot accept anything any more.
                EngineLog.warn("server " + address + ": its RDMA device was removed; disposing the server");
                engine.deviceRemoved(listener);
                dispose();
            }
            return;
        }
        CmId child = e.id();
        InetSocketAddress peer = safePeer(child);
        publish(new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, e.status(),
                e.privateDataTrimmed(), peer));
        if (disposing.get()) {
            reject(child);
            return;
        }
        EngineConnection c;
        try {
            DeviceResources device = engine.device(child.device());
            c = new EngineConnection(cm, child, device, config, true, sharedReceives(device));
        } catch (RuntimeException ex) {
            EngineLog.error("server " + address + ": cannot set up a connection for " + peer + "; rejecting", ex);
            reject(child);
            return;
        }
        Negotiation offered = Negotiation.decode(e.privateData());
        c.applyPeerOffer(offered);
        // The server published this request above: the connection records it without forwarding it again.
        c.emit(new ConnectionEvent(ConnectionEvent.Type.CONNECT_REQUEST, e.status(), e.privateDataTrimmed(), peer), false);
        c.setEventListener(this::publish);
        engine.track(c);
        connections.add(c);
        c.onDispose().subscribe(null, null, () -> connectionClosed(c));
        cm.register(child, c::onCmEvent);
        try {
            Publisher<Void> p = handler.apply(new ConnectionHandle(c, false));
            Mono.from(p).subscribe(null, err -> {
                EngineLog.error("server " + address + ": the handler of " + c + " failed", err);
                c.dispose();
            }, c::dispose);
        } catch (RuntimeException ex) {
            EngineLog.error("server " + address + ": the handler threw for " + c + "; rejecting", ex);
            try {
                child.reject(new byte[0]); // the peer gets REJECTED now rather than a connect timeout
            } catch (RuntimeException ignored) {
                // it will see a timeout instead
            }
            c.dispose();
            return;
        }
        // Accept once the tasks the handler handed to the connection's poller (receive() and its first
        // request, so receives are posted) have run: the peer may send as soon as it is accepted.
        c.poller.execute(() -> cm.execute(() -> accept(c, child, offered, peer)));
    }

    /** rdma_cm thread. */
    private void accept(EngineConnection c, CmId child, Negotiation offered, InetSocketAddress peer) {
        if (c.isDisposed()) {
            reject(child, false); // the handler closed it already: the peer hears now, the close destroys the id
            return;
        }
        try {
            // Plain peers (no offer) get no private data; framework peers get this side's answer.
            byte[] reply = offered != null ? c.offer().encode() : null;
            child.accept(ConnectParams.connParam(config, engine.device(child.device()), reply));
        } catch (NativeCallException ex) {
            if (ex.errno() == EINVAL) {
                // What a peer that already gave up (its connect timed out, its id is gone) leaves behind: seen
                // under emulation when a cold client JVM's first connect outlasts its timeout. Not a server fault.
                EngineLog.warn("server " + address + ": " + peer + " gave up before its connection was accepted ("
                        + ex.getMessage() + "); dropped");
            } else {
                EngineLog.error("server " + address + ": rdma_accept failed for " + c, ex);
            }
            c.dispose();
        } catch (RuntimeException ex) {
            EngineLog.error("server " + address + ": rdma_accept failed for " + c, ex);
            c.dispose();
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
        return sharedReceives.computeIfAbsent(device, d -> engine.sharedReceiveGroups().acquire(d, config));
    }

    /** Server-level events come from the rdma_cm thread and from each connection's poller: one at a time. */
    private void publish(ConnectionEvent e) {
        synchronized (events) {
            events.tryEmitNext(e);
        }
    }

    private static void reject(CmId child) {
        reject(child, true);
    }

    private static void reject(CmId child, boolean destroy) {
        try {
            child.reject(new byte[0]);
        } catch (RuntimeException ignored) {
            // the peer sees a timeout instead
        } finally {
            if (destroy) {
                child.close();
            }
        }
    }

    private static InetSocketAddress safePeer(CmId id) {
        try {
            return id.peerAddress();
        } catch (RuntimeException e) {
            return null;
        }
    }

    private void connectionClosed(EngineConnection c) {
        connections.remove(c);
        if (disposing.get() && connections.isEmpty()) {
            finish();
        }
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
            cm.unregister(listener);
            listener.close();
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
            sharedReceives.clear();
            java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(srqs.size() + 1);
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
