package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.samples.kv.KvClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.annotation.Nullable;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The gateway's one connection to the key-value server, shared by every HTTP request, with a lifecycle:
 * <ul>
 *   <li>start: begins connecting at once (without waiting: the application starts even when the server is
 *       not up yet; requests then wait for that connection, or fail with 503 when it fails);</li>
 *   <li>a connection that closes (server gone, network error) is dropped as soon as its client sees it
 *       close, and a new one is dialled after a backoff ({@link Reconnect}: exponential with jitter, growing
 *       while attempts fail or connections close soon after they opened);</li>
 *   <li>while the backend is down (the circuit is open), requests fail at once with 503 and a
 *       {@code Retry-After} until the next attempt is due, instead of each dialling again;</li>
 *   <li>stop (context shutdown, after the web server stopped taking requests): closes the connection and
 *       tells Spring when it is closed, without blocking a thread.</li>
 * </ul>
 * The RDMA client (where the server is, options, metrics) is the auto-configured bean from
 * {@code reactive-rdma.client.*}. Nothing here blocks. Results are handed back to WebFlux on Reactor's
 * parallel scheduler, not on the engine's poller thread, so that encoding a response or logging never
 * stalls the RDMA connections that poller serves.
 */
@Component
public class KvGateway implements KeyValueStore, SmartLifecycle {
    /** Starts before and stops after the web server (whose phases are DEFAULT_PHASE - 2048 and - 1024). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final Log log = LogFactory.getLog(KvGateway.class);

    private final RdmaClient rdma;
    private final Duration requestTimeout;
    private final int largePutBuffers;
    private final Reconnect reconnect;
    private final Scheduler handOff = Schedulers.parallel();
    /** The connection being made or made (a cached Mono), null when there is none. */
    private final AtomicReference<Mono<KvClient>> connection = new AtomicReference<>();
    private volatile boolean running;
    private volatile KvClient connected;
    private volatile long connectedAtNanos;
    private volatile Throwable lastFailure;
    @Nullable
    private volatile Disposable retry;

    public KvGateway(RdmaClient rdma, GatewayProperties properties) {
        this.rdma = Objects.requireNonNull(rdma, "rdma");
        this.requestTimeout = properties.requestTimeout();
        this.largePutBuffers = properties.largePutBuffers();
        this.reconnect = new Reconnect(properties.reconnectMinBackoff(), properties.reconnectMaxBackoff());
        Duration connectTimeout = rdma.configuration().option(RdmaOption.CONNECT_TIMEOUT);
        if (connectTimeout.compareTo(requestTimeout) >= 0) {
            throw new IllegalStateException("reactive-rdma.client.connect-timeout (" + connectTimeout
                    + ") must be shorter than gateway.request-timeout (" + requestTimeout + "): a request waiting for"
                    + " a connection would time out (504) before the connect attempt did");
        }
    }

    /**
     * The connection: the current one, or a new one when there is none and the backoff allows. Emits once
     * connected; fails with {@link GatewayUnavailableException} when connecting fails, while the circuit is
     * open (the next attempt is not due yet), or when the gateway is not running.
     */
    Mono<KvClient> client() {
        return Mono.defer(() -> {
            if (!running) {
                return Mono.error(new GatewayUnavailableException("the gateway is not running (starting or shut down)"));
            }
            Mono<KvClient> current = connection.get();
            KvClient open = connected;
            if (current != null && open != null && !open.isOpen()) {
                // closed, but its close sequence has not finished: do not hand it out
                dropped(current, open, null);
                current = connection.get();
            }
            while (current == null) {
                long waitNanos = reconnect.nanosUntilNextAttempt();
                if (waitNanos > 0) {
                    return Mono.error(circuitOpen(waitNanos));
                }
                Mono<KvClient> fresh = newConnection();
                current = connection.compareAndSet(null, fresh) ? fresh : connection.get();
            }
            return current;
        }).onErrorMap(e -> !(e instanceof GatewayUnavailableException), e -> new GatewayUnavailableException(
                "cannot connect to the key-value server at " + serverAddress() + ": " + e.getMessage(), e));
    }

    private GatewayUnavailableException circuitOpen(long waitNanos) {
        Throwable why = lastFailure;
        return new GatewayUnavailableException("the key-value server at " + serverAddress() + " is unavailable"
                + (why != null ? " (" + why.getMessage() + ")" : "") + "; next attempt in "
                + Math.max(1, waitNanos / 1_000_000) + " ms", null, Duration.ofNanos(waitNanos));
    }

    private Mono<KvClient> newConnection() {
        AtomicReference<Mono<KvClient>> self = new AtomicReference<>();
        Mono<KvClient> m = KvClient.connect(rdma, largePutBuffers)
                .doOnNext(kv -> {
                    connected = kv;
                    connectedAtNanos = System.nanoTime();
                    lastFailure = null;
                    log.info("connected to the key-value server at " + serverAddress());
                    kv.onDispose().subscribe(null, e -> dropped(self.get(), kv, e), () -> dropped(self.get(), kv, null));
                    if (!running) {
                        kv.dispose(); // stopped while connecting
                    }
                })
                .doOnError(e -> {
                    lastFailure = e;
                    connection.compareAndSet(self.get(), null);
                    Duration backoff = reconnect.failed();
                    log.warn("cannot connect to the key-value server at " + serverAddress() + ": " + e
                            + "; next attempt in " + backoff.toMillis() + " ms");
                    scheduleRetry(backoff);
                })
                .cache();
        self.set(m);
        return m;
    }

    /** The connection {@code kv} closed (or was found closed): drop it and dial again after the backoff. */
    private void dropped(Mono<KvClient> which, KvClient kv, @Nullable Throwable error) {
        if (!connection.compareAndSet(which, null)) {
            return; // already dropped
        }
        if (connected == kv) {
            connected = null;
        }
        Duration backoff = reconnect.closed(System.nanoTime() - connectedAtNanos);
        if (running) {
            log.warn("the connection to the key-value server closed" + (error != null ? " (" + error + ")" : "")
                    + ": reconnecting in " + backoff.toMillis() + " ms");
            scheduleRetry(backoff);
        }
    }

    private void scheduleRetry(Duration after) {
        if (!running) {
            return;
        }
        Disposable previous = retry;
        if (previous != null) {
            previous.dispose();
        }
        // a failure is logged and kept for health; what a request finds meanwhile is the open circuit
        retry = Mono.delay(after).flatMap(t -> client()).subscribe(null, e -> { });
    }

    /** Where the key-value server is, as configured. */
    String serverAddress() {
        return rdma.configuration().host() + ":" + rdma.configuration().port();
    }

    /** Whether a connection is open now (false as soon as it is seen closing). */
    public boolean isConnected() {
        KvClient c = connected;
        return c != null && c.isOpen();
    }

    /** Why the last connection attempt failed, or null when it did not. */
    @Nullable
    public Throwable lastFailure() {
        return lastFailure;
    }

    /** How long until the next connection attempt (zero: one may start now, or one is open). */
    public Duration nextAttemptIn() {
        return Duration.ofNanos(reconnect.nanosUntilNextAttempt());
    }

    @Override
    public Mono<byte[]> get(String key) {
        return client().flatMap(kv -> kv.get(key)).timeout(requestTimeout).publishOn(handOff);
    }

    @Override
    public Mono<Void> put(String key, byte[] value) {
        return client().flatMap(kv -> kv.put(key, value)).timeout(requestTimeout).publishOn(handOff);
    }

    @Override
    public Mono<Boolean> delete(String key) {
        return client().flatMap(kv -> kv.delete(key)).timeout(requestTimeout).publishOn(handOff);
    }

    @Override
    public Mono<Long> increment(String counter, long delta) {
        return client().flatMap(kv -> kv.increment(counter, delta)).timeout(requestTimeout).publishOn(handOff);
    }

    /**
     * The key-value client's download. Each chunk's timeout is the route's ({@link KvController}): it counts
     * only while the HTTP response asks for a chunk, so it lives where that demand is seen.
     */
    @Override
    public Flux<ByteBuffer> download(String key, int chunkSizeBytes) {
        return client().flatMapMany(kv -> kv.download(key, chunkSizeBytes)).publishOn(handOff);
    }

    @Override
    public void start() {
        running = true;
        client().subscribe(null, e -> { }); // connect now; a failure is logged and kept for health
    }

    /** Starts closing the connection and returns (Spring calls {@link #stop(Runnable)} and waits for it). */
    @Override
    public void stop() {
        stop(() -> { });
    }

    /** Closes the connection; {@code callback} runs once it is closed (or after 10 s). */
    @Override
    public void stop(Runnable callback) {
        running = false;
        Disposable r = retry;
        if (r != null) {
            r.dispose();
        }
        Mono<KvClient> current = connection.getAndSet(null);
        if (current == null) {
            callback.run();
            return;
        }
        current.flatMap(kv -> {
                    kv.dispose();
                    return kv.onDispose();
                })
                .timeout(CLOSE_WAIT)
                .doOnSuccess(v -> log.info("the connection to the key-value server is closed"))
                .doOnError(e -> log.warn("closing the key-value connection: " + e))
                .onErrorResume(e -> Mono.empty())
                .doFinally(s -> callback.run())
                .subscribe();
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
