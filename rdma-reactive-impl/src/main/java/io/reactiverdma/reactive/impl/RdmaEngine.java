package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEvent;
import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.cm.ConnParam;
import io.reactiverdma.cm.PortSpace;
import io.reactiverdma.cm.RdmaCmId;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.RdmaNative;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.spi.RdmaTransportProvider;
import io.reactiverdma.verbs.VerbsContext;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Schedulers;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The engine: one rdma_cm event loop for the JVM and one {@link DeviceResources} per RDMA device, created on
 * first use and kept for the life of the JVM (like Reactor Netty's global loop resources). Found by the API
 * through {@link java.util.ServiceLoader}.
 */
public final class RdmaEngine implements RdmaTransportProvider {
    private static final Object LOCK = new Object();
    private static CmEventLoop cmLoop;
    private static final Map<Long, DeviceResources> DEVICES = new ConcurrentHashMap<>();

    /** For {@link java.util.ServiceLoader}. */
    public RdmaEngine() {
    }

    static CmEventLoop cm() {
        synchronized (LOCK) {
            if (cmLoop == null) {
                try {
                    RdmaNative.ensureAvailability();
                } catch (RuntimeException e) {
                    throw new RdmaException("RDMA is not usable here: " + e.getMessage(), e);
                }
                cmLoop = new CmEventLoop("rdma-cm-events");
            }
            return cmLoop;
        }
    }

    static DeviceResources device(VerbsContext context) {
        return DEVICES.computeIfAbsent(context.address(), a -> new DeviceResources(context));
    }

    static ConnectionEvent.Type map(CmEventType t) {
        return switch (t) {
            case ADDR_RESOLVED -> ConnectionEvent.Type.ADDRESS_RESOLVED;
            case ADDR_ERROR -> ConnectionEvent.Type.ADDRESS_ERROR;
            case ROUTE_RESOLVED -> ConnectionEvent.Type.ROUTE_RESOLVED;
            case ROUTE_ERROR -> ConnectionEvent.Type.ROUTE_ERROR;
            case CONNECT_REQUEST -> ConnectionEvent.Type.CONNECT_REQUEST;
            case CONNECT_RESPONSE, ESTABLISHED -> ConnectionEvent.Type.ESTABLISHED;
            case CONNECT_ERROR, MULTICAST_ERROR -> ConnectionEvent.Type.CONNECT_ERROR;
            case UNREACHABLE -> ConnectionEvent.Type.UNREACHABLE;
            case REJECTED -> ConnectionEvent.Type.REJECTED;
            case DISCONNECTED -> ConnectionEvent.Type.DISCONNECTED;
            case DEVICE_REMOVAL -> ConnectionEvent.Type.DEVICE_REMOVAL;
            case ADDR_CHANGE -> ConnectionEvent.Type.ADDRESS_CHANGE;
            case TIMEWAIT_EXIT -> ConnectionEvent.Type.TIMEWAIT_EXIT;
            case MULTICAST_JOIN -> ConnectionEvent.Type.ESTABLISHED;
        };
    }

    static ConnParam connParam(RdmaTransportConfig config, DeviceResources device, byte[] privateData) {
        int depth = Math.min(config.option(RdmaOption.READ_ATOMIC_DEPTH), Math.max(1, device.attributes.maxQpRdAtom()));
        ConnParam p = ConnParam.create().responderResources(depth).initiatorDepth(depth)
                .retryCount(config.option(RdmaOption.RETRY_COUNT))
                .rnrRetryCount(config.option(RdmaOption.RNR_RETRY_COUNT));
        return privateData == null ? p : p.privateData(privateData);
    }

    static InetSocketAddress address(RdmaTransportConfig config) {
        try {
            return new InetSocketAddress(InetAddress.getByName(config.host()), config.port());
        } catch (UnknownHostException e) {
            throw new RdmaConnectException("cannot resolve host " + config.host() + ": " + e.getMessage(),
                    ConnectionEvent.Type.ADDRESS_ERROR, 0, null);
        }
    }

    // ------------------------------------------------------------------------------------------ client
    @Override
    public Mono<RdmaConnection> connect(RdmaTransportConfig config) {
        Duration timeout = config.option(RdmaOption.CONNECT_TIMEOUT);
        return EngineObservations.connect(config, Mono.<RdmaConnection>create(sink -> {
            CmEventLoop cm = cm();
            ClientAttempt attempt = new ClientAttempt(cm, config, sink);
            sink.onCancel(() -> {
                if (attempt.handover.compareAndSet(ClientAttempt.PENDING, ClientAttempt.CANCELLED)) {
                    cm.execute(attempt::abandon);
                }
            });
            cm.execute(attempt::start);
        })
        // A cancel that races the hand-over (the connection was emitted as the subscriber went away): Reactor
        // discards the value instead of delivering it; close it rather than leak it.
        .doOnDiscard(RdmaConnection.class, RdmaConnection::dispose)
        // The timer runs on the callback scheduler when there is one: the timeout error is connect()'s result
        // like any other, and the callbackScheduler contract says where results are delivered.
        .timeout(timeout, Mono.error(() -> new RdmaConnectException("connecting to " + config.host() + ":"
                + config.port() + " did not complete within " + timeout, ConnectionEvent.Type.CONNECT_ERROR,
                -110, null)), config.callbackScheduler() != null ? config.callbackScheduler() : Schedulers.parallel()));
    }

    /** One connection attempt, driven by rdma_cm events on the event loop thread. */
    private static final class ClientAttempt {
        private final CmEventLoop cm;
        private final RdmaTransportConfig config;
        private final MonoSink<RdmaConnection> sink;
        private final List<ConnectionEvent> early = new ArrayList<>();
        private RdmaCmId id;
        private EngineConnection connection;
        private InetSocketAddress destination;
        private boolean done;
        static final int PENDING = 0;
        static final int DELIVERED = 1;
        static final int CANCELLED = 2;
        /** Who got the connection: the subscriber, or nobody because it cancelled (then it is closed). */
        final java.util.concurrent.atomic.AtomicInteger handover = new java.util.concurrent.atomic.AtomicInteger();

        ClientAttempt(CmEventLoop cm, RdmaTransportConfig config, MonoSink<RdmaConnection> sink) {
            this.cm = cm;
            this.config = config;
            this.sink = sink;
        }

        private int timeoutMs() {
            return (int) Math.max(1, config.option(RdmaOption.CONNECT_TIMEOUT).toMillis());
        }

        void start() {
            try {
                destination = address(config);
                id = RdmaCmId.create(cm.channel(), PortSpace.TCP);
                cm.register(id, this::onEvent);
                id.resolveAddress(null, destination, timeoutMs());
            } catch (RuntimeException e) {
                fail(e instanceof RdmaException ? e : new RdmaConnectException("cannot connect to " + destination
                        + ": " + e.getMessage(), ConnectionEvent.Type.ADDRESS_ERROR, 0, null));
            }
        }

        private void onEvent(CmEvent e) {
            if (done) {
                return;
            }
            ConnectionEvent event = new ConnectionEvent(map(e.type()), e.status(), e.privateDataTrimmed(), destination);
            try {
                switch (e.type()) {
                    case ADDR_RESOLVED -> {
                        early.add(event);
                        id.resolveRoute(timeoutMs());
                    }
                    case ROUTE_RESOLVED -> {
                        early.add(event);
                        DeviceResources device = device(id.verbsContext());
                        connection = new EngineConnection(cm, id, device, config, false);
                        early.forEach(connection::emit);
                        id.connect(connParam(config, device, connection.offer().encode()));
                    }
                    case ESTABLISHED -> {
                        done = true;
                        connection.applyPeerOffer(Negotiation.decode(e.privateData()));
                        cm.register(id, connection::onCmEvent);
                        connection.emit(event);
                        connection.established();
                        EngineConnection c = connection;
                        signal(() -> {
                            if (handover.compareAndSet(PENDING, DELIVERED)) {
                                sink.success(c);
                            } else {
                                c.dispose(); // the subscriber cancelled (or timed out) while this was under way
                            }
                        });
                    }
                    default -> {
                        if (e.type().isConnectFailure() || e.type() == CmEventType.DEVICE_REMOVAL) {
                            fail(new RdmaConnectException("connecting to " + destination + " failed: "
                                    + e.type().cName() + " (status " + e.status() + ")", map(e.type()), e.status(),
                                    e.privateDataTrimmed()));
                        }
                    }
                }
            } catch (RuntimeException ex) {
                fail(ex instanceof RdmaException ? ex : stepFailed(e.type(), ex));
            }
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
            cleanUp();
            signal(() -> sink.error(error));
        }

        /**
         * Signals the subscriber on the callback scheduler when one is configured (like every operation's
         * signal), else here on the rdma_cm thread. The hand-over decision is made where the signal runs, so a
         * cancel that arrives meanwhile still gets the connection closed rather than lost.
         */
        private void signal(Runnable r) {
            reactor.core.scheduler.Scheduler s = config.callbackScheduler();
            if (s == null) {
                r.run();
            } else {
                s.schedule(r);
            }
        }

        /** The subscriber cancelled (or timed out): release what the attempt made. */
        void abandon() {
            if (done) {
                return; // failed (cleaned up already) or established (then cleaned up there, see handover)
            }
            done = true;
            cleanUp();
        }

        private void cleanUp() {
            if (connection != null) {
                connection.close(new RdmaConnectException("connection attempt abandoned",
                        ConnectionEvent.Type.CONNECT_ERROR, 0, null));
            } else if (id != null) {
                cm.unregister(id);
                id.close();
            }
        }
    }

    // ------------------------------------------------------------------------------------------ server
    @Override
    public Mono<DisposableRdmaServer> bind(RdmaTransportConfig config,
            Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return Mono.create(sink -> {
            CmEventLoop cm = cm();
            cm.execute(() -> {
                try {
                    sink.success(EngineObservations.watch(config, new EngineServer(cm, config, handler)));
                } catch (RuntimeException e) {
                    sink.error(e instanceof RdmaException ? e : new RdmaException("cannot listen on "
                            + config.host() + ":" + config.port() + ": " + e.getMessage(), e));
                }
            });
        });
    }
}
