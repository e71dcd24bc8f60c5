package io.reactiverdma.samples.gateway;

import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.samples.kv.KvClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The gateway's one connection to the key-value server, shared by every HTTP request, with a lifecycle:
 * <ul>
 *   <li>start: begins connecting at once (without waiting: the application starts even when the server is
 *       not up yet; requests then wait for that connection, or fail with 503 when it fails);</li>
 *   <li>a connection that closes (server gone, network error) is dropped and a new one is started at once;
 *       a failed attempt is not retried by itself: the next request (or health check) tries again;</li>
 *   <li>stop (context shutdown, after the web server stopped taking requests): closes the connection and
 *       tells Spring when it is closed, without blocking a thread.</li>
 * </ul>
 * The RDMA client (where the server is, options, metrics) is the auto-configured bean from
 * {@code reactive-rdma.client.*}. Nothing here blocks: every operation is the key-value client's
 * {@code Mono}/{@code Flux}, run on the engine's threads.
 */
@Component
public class KvGateway implements KeyValueStore, SmartLifecycle {
    /** Starts before and stops after the web server (whose phases are DEFAULT_PHASE - 2048 and - 1024). */
    static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final Log log = LogFactory.getLog(KvGateway.class);

    private final RdmaClient rdma;
    private final Duration requestTimeout;
    /** The connection being made or made (a cached Mono), null when there is none. */
    private final AtomicReference<Mono<KvClient>> connection = new AtomicReference<>();
    private volatile boolean running;
    private volatile KvClient connected;
    private volatile Throwable lastFailure;

    public KvGateway(RdmaClient rdma, GatewayProperties properties) {
        this.rdma = Objects.requireNonNull(rdma, "rdma");
        this.requestTimeout = properties.requestTimeout();
    }

    /**
     * The connection: the current one, or a new one when there is none. Emits once connected; fails with
     * the key-value client's connect error ({@code RdmaConnectException} ...) or
     * {@link GatewayUnavailableException} when the gateway is not running.
     */
    Mono<KvClient> client() {
        return Mono.defer(() -> {
            if (!running) {
                return Mono.error(new GatewayUnavailableException("the gateway is not running (starting or shut down)"));
            }
            Mono<KvClient> current = connection.get();
            while (current == null) {
                Mono<KvClient> fresh = newConnection();
                current = connection.compareAndSet(null, fresh) ? fresh : connection.get();
            }
            return current;
        }).onErrorMap(e -> !(e instanceof GatewayUnavailableException), e -> new GatewayUnavailableException(
                "cannot connect to the key-value server at " + serverAddress() + ": " + e.getMessage(), e));
    }

    private Mono<KvClient> newConnection() {
        AtomicReference<Mono<KvClient>> self = new AtomicReference<>();
        Mono<KvClient> m = KvClient.connect(rdma)
                .doOnNext(kv -> {
                    connected = kv;
                    lastFailure = null;
                    log.info("connected to the key-value server at " + serverAddress());
                    kv.onDispose().subscribe(null, e -> closed(self.get(), kv, e), () -> closed(self.get(), kv, null));
                    if (!running) {
                        kv.dispose(); // stopped while connecting
                    }
                })
                .doOnError(e -> {
                    lastFailure = e;
                    connection.compareAndSet(self.get(), null);
                    log.warn("cannot connect to the key-value server at " + serverAddress() + ": " + e);
                })
                .cache();
        self.set(m);
        return m;
    }

    private void closed(Mono<KvClient> which, KvClient kv, Throwable error) {
        connection.compareAndSet(which, null);
        if (connected == kv) {
            connected = null;
        }
        if (running) {
            log.warn("the connection to the key-value server closed" + (error != null ? " (" + error + ")" : "")
                    + ": reconnecting");
            client().subscribe(null, e -> { }); // a failure is logged and kept for health
        }
    }

    /** Where the key-value server is, as configured. */
    String serverAddress() {
        return rdma.configuration().host() + ":" + rdma.configuration().port();
    }

    /** Whether a connection is open now. */
    public boolean isConnected() {
        KvClient c = connected;
        return c != null && !c.isDisposed();
    }

    /** Why the last connection attempt failed, or null when it did not. */
    public Throwable lastFailure() {
        return lastFailure;
    }

    @Override
    public Mono<byte[]> get(String key) {
        return client().flatMap(kv -> kv.get(key)).timeout(requestTimeout);
    }

    @Override
    public Mono<Void> put(String key, byte[] value) {
        return client().flatMap(kv -> kv.put(key, value)).timeout(requestTimeout);
    }

    @Override
    public Mono<Boolean> delete(String key) {
        return client().flatMap(kv -> kv.delete(key)).timeout(requestTimeout);
    }

    @Override
    public Mono<Long> increment(String counter, long delta) {
        return client().flatMap(kv -> kv.increment(counter, delta)).timeout(requestTimeout);
    }

    /**
     * The key-value client's download: no timeout between chunks, since a slow HTTP client legitimately
     * leaves the stream without demand for as long as it likes (only the connection is time-limited).
     */
    @Override
    public Flux<ByteBuffer> download(String key, int chunkSizeBytes) {
        return client().timeout(requestTimeout).flatMapMany(kv -> kv.download(key, chunkSizeBytes));
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
