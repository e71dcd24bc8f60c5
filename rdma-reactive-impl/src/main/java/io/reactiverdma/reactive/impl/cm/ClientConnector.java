package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.impl.connection.ConnectionHandle;
import io.reactiverdma.reactive.impl.connection.EngineConnection;
import io.reactiverdma.reactive.impl.connection.Negotiation;
import io.reactiverdma.reactive.impl.device.DeviceResources;
import io.reactiverdma.reactive.impl.support.CmEvents;
import io.reactiverdma.reactive.impl.support.EngineTimer;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaClientConfig;
import io.reactiverdma.reactive.impl.verbs.CmEventInfo;
import io.reactiverdma.reactive.impl.verbs.CmId;
import reactor.core.publisher.MonoSink;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One client connection attempt, driven by rdma_cm events on the event loop thread: resolve the address,
 * the route, create the connection, connect, and hand the established connection to the subscriber.
 *
 * <p>The connect timeout is decided on the same thread as the events: either ESTABLISHED or the timeout
 * comes first, never both, so a connection that is established just as the timeout fires is either handed
 * over or closed, never lost. A subscriber that cancels meanwhile (its own {@code timeout} included) gets
 * nothing and the connection is closed: {@link #handover} says who owns it.
 */
public final class ClientConnector {
    public static final int PENDING = 0;
    public static final int DELIVERED = 1;
    public static final int CANCELLED = 2;

    private final EngineContext engine;
    private final CmEventLoop cm;
    private final RdmaClientConfig config;
    private final ConnectParams.ClientAddresses addresses;
    private final MonoSink<RdmaConnection> sink;
    private final List<ConnectionEvent> early = new ArrayList<>();
    /** Who got the connection: the subscriber, or nobody because it cancelled (then it is closed). */
    public final AtomicInteger handover = new AtomicInteger(PENDING);
    private CmId id;
    private EngineConnection connection;
    private InetSocketAddress destination;
    private ScheduledFuture<?> timer;
    private boolean done;

    /** An attempt to connect to {@code addresses} (resolved before: no lookup on the rdma_cm thread). */
    public ClientConnector(EngineContext engine, CmEventLoop cm, RdmaClientConfig config,
            ConnectParams.ClientAddresses addresses, MonoSink<RdmaConnection> sink) {
        this.engine = engine;
        this.cm = cm;
        this.config = config;
        this.addresses = addresses;
        this.sink = sink;
    }

    private int timeoutMs() {
        return (int) Math.max(1, config.option(RdmaOption.CONNECT_TIMEOUT).toMillis());
    }

    /** rdma_cm thread. */
    public void start() {
        timer = EngineTimer.schedule(() -> cm.execute(this::timedOut), config.option(RdmaOption.CONNECT_TIMEOUT));
        try {
            destination = addresses.destination();
            InetSocketAddress source = addresses.source();
            id = cm.channel().createId(PortSpace.TCP);
            cm.register(id, this::onEvent);
            int tos = config.option(RdmaOption.TYPE_OF_SERVICE);
            if (tos >= 0) {
                id.setTypeOfService(tos); // before the route is resolved: the route's traffic class comes from it
            }
            id.resolveAddress(source, destination, timeoutMs());
        } catch (RuntimeException e) {
            if (e instanceof RdmaException) {
                fail(e);
            } else {
                RdmaConnectException typed = new RdmaConnectException("cannot connect to " + destination + ": "
                        + e.getMessage(), ConnectionEvent.Type.ADDRESS_ERROR, 0, null);
                typed.initCause(e);
                fail(typed);
            }
        }
    }

    private void onEvent(CmEventInfo e) {
        if (done) {
            return;
        }
        ConnectionEvent event = new ConnectionEvent(CmEvents.map(e.type()), e.status(), e.privateDataTrimmed(), destination);
        try {
            switch (e.type()) {
                case ADDR_RESOLVED -> {
                    early.add(event);
                    id.resolveRoute(timeoutMs());
                }
                case ROUTE_RESOLVED -> {
                    early.add(event);
                    DeviceResources device = engine.device(id);
                    connection = new EngineConnection(cm, id, device, config, false, null);
                    engine.track(connection);
                    // Closed before ESTABLISHED (its poller failed, its device went away): the attempt fails now
                    // rather than at the connect timeout.
                    EngineConnection created = connection;
                    created.onDispose().subscribe(null, null, () -> cm.execute(() -> {
                        if (!done) {
                            fail(closedBeforeHandOver(created));
                        }
                    }));
                    early.forEach(connection::emit);
                    ConnectParams.applyAckTimeout(config, id);
                    id.connect(ConnectParams.connParam(config, device,
                            connection.agreement().offer().encode(config.privateData())));
                }
                case ESTABLISHED -> {
                    Negotiation answer = Negotiation.decode(e.privateData());
                    byte[] serverData = answer != null ? Negotiation.applicationData(e.privateData())
                            : e.privateDataTrimmed();
                    if (serverData == null) {
                        // A hostile or broken server: its reply claims more private data than it carried.
                        fail(new RdmaConnectException("connecting to " + destination + " failed: the server's "
                                + "accept private data is malformed (its length byte claims more than the "
                                + e.privateData().length + " bytes that arrived)", ConnectionEvent.Type.CONNECT_ERROR,
                                0, e.privateDataTrimmed()));
                        return;
                    }
                    done = true;
                    engine.untrack(this);
                    timer.cancel(false);
                    EngineConnection c = connection;
                    c.agreement().applyMinRnrTimer(); // librdmacm moved the QP to RTS before reporting ESTABLISHED
                    c.agreement().peerPrivateData(serverData);
                    c.agreement().applyPeerOffer(answer);
                    cm.register(id, c::onCmEvent);
                    c.emit(event);
                    c.established(() -> signal(() -> {
                        if (handover.compareAndSet(PENDING, DELIVERED)) {
                            sink.success(new ConnectionHandle(c, true));
                        } else {
                            c.dispose(); // the subscriber cancelled while this was under way
                        }
                    }), () -> signal(() -> sink.error(closedBeforeHandOver(c))));
                }
                default -> {
                    if (e.type() == CmEventType.DEVICE_REMOVAL) {
                        engine.deviceRemoved(id);
                    }
                    if (e.type() == CmEventType.REJECTED) {
                        fail(RejectData.decode(String.valueOf(destination), e.status(), e.privateData()));
                    } else if (e.type().isConnectFailure() || e.type() == CmEventType.DEVICE_REMOVAL) {
                        fail(new RdmaConnectException("connecting to " + destination + " failed: "
                                + e.type().cName() + " (status " + e.status() + ")", CmEvents.map(e.type()),
                                e.status(), e.privateDataTrimmed()));
                    }
                }
            }
        } catch (RuntimeException ex) {
            fail(ex instanceof RdmaException ? ex : stepFailed(e.type(), ex));
        }
    }

    private RdmaConnectException closedBeforeHandOver(EngineConnection c) {
        RdmaConnectException typed = new RdmaConnectException("connecting to " + destination
                + " failed: the connection closed before it was established", ConnectionEvent.Type.CONNECT_ERROR,
                0, null);
        Throwable cause = c.closeCause();
        if (cause != null) {
            typed.initCause(cause);
        }
        return typed;
    }

    /** rdma_cm thread: the connect timeout, unless ESTABLISHED or a failure came first. */
    private void timedOut() {
        if (done) {
            return;
        }
        Duration timeout = config.option(RdmaOption.CONNECT_TIMEOUT);
        fail(new RdmaConnectException("connecting to " + config.host() + ":" + config.port()
                + " did not complete within " + timeout, ConnectionEvent.Type.CONNECT_ERROR, -110, null));
    }

    /**
     * A call made in answer to an rdma_cm event failed at once (rdma_resolve_route after ADDR_RESOLVED,
     * setting up the queue pair or rdma_connect after ROUTE_RESOLVED): typed like the event that would
     * have reported it, so callers handle one exception type for every way connecting fails.
     */
    private RdmaConnectException stepFailed(CmEventType step, RuntimeException cause) {
        ConnectionEvent.Type reason = step == CmEventType.ADDR_RESOLVED
                ? ConnectionEvent.Type.ROUTE_ERROR : ConnectionEvent.Type.CONNECT_ERROR;
        int status = cause instanceof NativeCallException n ? -n.errno() : 0;
        RdmaConnectException typed = new RdmaConnectException("connecting to " + destination + " failed: "
                + cause.getMessage(), reason, status, null);
        typed.initCause(cause);
        return typed;
    }

    private void fail(Throwable error) {
        done = true;
        engine.untrack(this);
        if (timer != null) {
            timer.cancel(false);
        }
        cleanUp(error);
        signal(() -> sink.error(error));
    }

    /**
     * Signals the subscriber on the callback scheduler when one is configured (like every operation's
     * signal), else on the current engine thread. The hand-over decision is made where the signal runs, so
     * a cancel that arrives meanwhile still gets the connection closed rather than lost.
     */
    private void signal(Runnable r) {
        reactor.core.scheduler.Scheduler s = config.callbackScheduler();
        if (s == null) {
            r.run();
        } else {
            s.schedule(r);
        }
    }

    /** rdma_cm thread: the engine shuts down; an attempt still under way fails. */
    public void shutDown() {
        if (!done) {
            fail(new RdmaConnectException("connecting to " + config.host() + ":" + config.port()
                    + " was abandoned: the engine was shut down", ConnectionEvent.Type.CONNECT_ERROR, 0, null));
        }
    }

    /** rdma_cm thread: the subscriber cancelled before the connection was handed over. */
    public void abandon() {
        if (done) {
            return; // failed (cleaned up already) or established (then the hand-over closes it)
        }
        done = true;
        engine.untrack(this);
        if (timer != null) {
            timer.cancel(false);
        }
        cleanUp(new RdmaConnectException("connection attempt abandoned", ConnectionEvent.Type.CONNECT_ERROR, 0, null));
    }

    private void cleanUp(Throwable cause) {
        if (connection != null) {
            connection.closeFromAnyThread(cause);
        } else if (id != null) {
            cm.unregister(id);
            id.close();
        }
    }
}
