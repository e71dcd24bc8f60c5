package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.samples.common.ServerLimits;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * An RDMA echo server on the reactive API: every message a client sends comes back to it, unchanged.
 * The whole per-connection logic is one line,
 * <pre>{@code
 * conn.send(conn.receive().map(EchoServer::copyAndRelease))
 * }</pre>
 * {@code send(Publisher)} asks {@code receive()} for one more message only when a send slot (and, with
 * credit flow control, a peer credit) frees up, and {@code receive()} posts receive buffers only for that
 * demand: a client that sends faster than its replies drain is slowed down by the transport, never
 * buffered without bound. Each message is copied out and released at once, so its receive buffer is
 * reposted while the reply is still on its way.
 */
public final class EchoServer implements AutoCloseable {
    private final Consumer<String> log;
    private final AtomicLong echoed = new AtomicLong();
    private volatile DisposableRdmaServer server;

    private EchoServer(Consumer<String> log) {
        this.log = log;
    }

    /**
     * Binds an echo server and returns once it listens.
     *
     * @param host           a local address of an RDMA device's netdev
     * @param port           rdma_cm port, 0 for any free one
     * @param maxMessageSize the largest message accepted (the receive buffer size), 1..1 MiB
     * @param bindTimeout    how long to wait for the bind
     * @param log            receives one line per connection opened and closed (may be {@code s -> {}})
     * @throws io.reactiverdma.reactive.RdmaException when the address cannot be bound (no RDMA device there,
     *                                                port in use)
     */
    public static EchoServer start(String host, int port, int maxMessageSize, Duration bindTimeout,
            Consumer<String> log) {
        return start(host, port, maxMessageSize, ServerLimits.DEFAULTS, bindTimeout, log);
    }

    /** The same, with the engine's server options {@code limits}. */
    public static EchoServer start(String host, int port, int maxMessageSize, ServerLimits limits, Duration bindTimeout,
            Consumer<String> log) {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(log, "log");
        int bufferSize = Math.max(8, maxMessageSize);
        EchoServer echo = new EchoServer(log);
        echo.server = limits.applyTo(RdmaServer.create()
                        .host(host)
                        .port(port)
                        .option(RdmaOption.RECEIVE_BUFFER_SIZE, bufferSize)
                        .option(RdmaOption.RECEIVE_QUEUE_DEPTH, receiveQueueDepth(bufferSize)))
                .handle(echo::handle)
                .bindNow(bindTimeout);
        return echo;
    }

    /**
     * Receive buffers per connection: the API's default 64, fewer for large buffers so that one connection
     * pins at most about 4 MiB for them (registered memory counts against RLIMIT_MEMLOCK).
     */
    public static int receiveQueueDepth(int bufferSize) {
        return Math.max(4, Math.min(64, (4 << 20) / bufferSize));
    }

    /** One connection: echo until the client closes it. Called before the connection is accepted. */
    private Publisher<Void> handle(RdmaConnection conn) {
        AtomicLong mine = new AtomicLong();
        InetSocketAddress peer = conn.remoteAddress();
        log.accept("connection from " + peer);
        return conn.send(conn.receive().map(m -> {
                    mine.incrementAndGet();
                    echoed.incrementAndGet();
                    return copyAndRelease(m);
                }))
                // The client may close while a reply is on its way: that reply is flushed. Not an error here.
                .onErrorResume(ConnectionClosedException.class, e -> Mono.empty())
                .doOnError(e -> log.accept("connection from " + peer + " failed: " + e))
                .doOnSuccess(v -> log.accept("connection from " + peer + " closed after " + mine.get()
                        + (mine.get() == 1 ? " message" : " messages")));
    }

    /** A copy of the message's bytes; the message is released (its receive buffer goes back) either way. */
    public static ByteBuffer copyAndRelease(RdmaMessage m) {
        try {
            return ByteBuffer.wrap(m.toByteArray());
        } finally {
            m.release();
        }
    }

    /** The address it listens on, with the real port. */
    public InetSocketAddress address() {
        return server.address();
    }

    /** Messages received (and handed to the send side to be echoed) over all connections so far. */
    public long messagesEchoed() {
        return echoed.get();
    }

    public int connectionCount() {
        return server.connectionCount();
    }

    /** Completes once the server stopped listening and every connection is closed. */
    public Mono<Void> onDispose() {
        return server.onDispose();
    }

    /** Stops listening and closes every connection (asynchronously: see {@link #onDispose()}). */
    public void dispose() {
        server.dispose();
    }

    /** Stops listening, closes every connection and waits at most 30 s for that. */
    @Override
    public void close() {
        server.disposeNow(Duration.ofSeconds(30));
    }
}
