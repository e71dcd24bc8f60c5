package io.reactiverdma.samples.echo;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The echo client: sends N messages of S bytes one at a time (ping-pong: message i+1 leaves when the reply
 * to message i is in), checks every reply byte for byte against what was sent, and records each round trip.
 *
 * <p>It is reactive end to end: {@code receive()} is subscribed once, each reply's arrival emits the next
 * message index into a sink, and {@code send(Publisher)} sends what that sink emits. Nothing blocks except
 * {@link #run}'s final wait.
 *
 * <p>Failures are typed: {@link EchoException.Mismatch} for a reply that differs from its message,
 * {@link EchoException.Timeout} when a reply takes longer than the timeout, {@link ConnectionClosedException}
 * when the connection closes before the last reply (the server went away), and the API's own exceptions for
 * everything else ({@code RdmaConnectException} when connecting fails ...).
 */
public final class EchoClient {
    private EchoClient() {
    }

    /** A client for an echo server at {@code host:port} whose receive buffers take {@code size}-byte replies. */
    public static RdmaClient client(String host, int port, int size, Duration connectTimeout) {
        int bufferSize = Math.max(size, EchoOptions.DEFAULT_MAX_MESSAGE_SIZE);
        return RdmaClient.create()
                .host(host)
                .port(port)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, bufferSize)
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, EchoServer.receiveQueueDepth(bufferSize))
                .option(RdmaOption.CONNECT_TIMEOUT, connectTimeout);
    }

    /**
     * Connects, ping-pongs {@code count} messages of {@code size} bytes, closes the connection and returns the
     * round trips. {@code timeout} limits connecting and each reply.
     */
    public static RoundTripStats run(String host, int port, int count, int size, Duration timeout,
            Consumer<String> log) {
        long t0 = System.nanoTime();
        RdmaConnection conn = client(host, port, size, timeout).connectNow(timeout.plusSeconds(5));
        try {
            log.accept("connected to " + conn.remoteAddress() + " from " + conn.localAddress() + " in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms (credit flow control "
                    + (conn.creditFlowControl() ? "on" : "off") + ", largest message " + conn.maxMessageSize()
                    + " bytes)");
            // Every stage is bounded (the reply timeout), so this wait is too.
            return pingPong(conn, count, size, timeout).block();
        } finally {
            conn.dispose();
            conn.onDispose().block(Duration.ofSeconds(30));
        }
    }

    /**
     * Ping-pongs {@code count} messages of {@code size} bytes over {@code conn} (whose peer echoes). Emits the
     * round trips once every reply arrived and matched; leaves the connection open. Lazy: nothing happens
     * before subscription; subscribe once.
     */
    public static Mono<RoundTripStats> pingPong(RdmaConnection conn, int count, int size, Duration replyTimeout) {
        Objects.requireNonNull(conn, "conn");
        Objects.requireNonNull(replyTimeout, "replyTimeout");
        if (count < 1 || size < 1) {
            throw new IllegalArgumentException("count and size must be positive, got " + count + " and " + size);
        }
        return Mono.defer(() -> {
            if (size > conn.maxMessageSize()) {
                return Mono.error(new InvalidRequestException(InvalidRequestException.Reason.MESSAGE_TOO_LARGE,
                        "a " + size + "-byte message does not fit the server's " + conn.maxMessageSize()
                                + "-byte receive buffers (start the server with --max-size " + size + ")"));
            }
            return new PingPong(conn, count, size).run(replyTimeout);
        });
    }

    /** The bytes of message {@code index}: differ from message to message and from offset to offset. */
    static void fillPattern(byte[] b, int index) {
        for (int j = 0; j < b.length; j++) {
            b[j] = (byte) (index * 31 + j * 7 + (j >>> 8));
        }
    }

    /** The state of one run. Message i+1 is made only after reply i was checked, so one buffer serves all. */
    private static final class PingPong {
        private final RdmaConnection conn;
        private final int count;
        private final int size;
        private final RoundTripStats stats;
        private final byte[] message;
        private final Sinks.Many<Integer> turns = Sinks.many().unicast().onBackpressureBuffer();
        private volatile long sentAtNs;

        PingPong(RdmaConnection conn, int count, int size) {
            this.conn = conn;
            this.count = count;
            this.size = size;
            this.stats = new RoundTripStats(count);
            this.message = new byte[size];
        }

        Mono<RoundTripStats> run(Duration replyTimeout) {
            // send(ByteBuffer) copies the bytes when it is subscribed, which flatMap inside send(Publisher)
            // does as soon as the index is emitted: the buffer is free again before the reply can come.
            // A connection that closes fails the send too, as often first: the replies say how far it got.
            Mono<Void> sending = conn.send(turns.asFlux().map(this::nextMessage))
                    .onErrorResume(ConnectionClosedException.class, e -> Mono.empty());
            Mono<Void> replies = conn.receive()
                    .timeout(replyTimeout, Flux.defer(() -> Flux.error(new EchoException.Timeout(
                            "no reply to message " + stats.count() + " of " + count + " within "
                                    + replyTimeout.toMillis() + " ms", stats.count()))))
                    .take(count)
                    .doOnNext(this::onReply)
                    .count()
                    .flatMap(n -> n < count
                            ? Mono.error(new ConnectionClosedException("the connection to " + conn.remoteAddress()
                                    + " closed after " + n + " of " + count + " replies"))
                            : Mono.empty());
            // Mono.when subscribes in order: receives are asked for before message 0 can leave.
            turns.tryEmitNext(0);
            return Mono.when(replies, sending).then(Mono.fromSupplier(() -> stats));
        }

        private ByteBuffer nextMessage(int index) {
            fillPattern(message, index);
            sentAtNs = System.nanoTime();
            return ByteBuffer.wrap(message).asReadOnlyBuffer();
        }

        private void onReply(RdmaMessage reply) {
            long rtt = System.nanoTime() - sentAtNs;
            int index = stats.count();
            try {
                check(reply, index);
            } finally {
                reply.release();
            }
            stats.record(rtt);
            if (index + 1 < count) {
                turns.tryEmitNext(index + 1);
            } else {
                turns.tryEmitComplete();
            }
        }

        private void check(RdmaMessage reply, int index) {
            ByteBuffer got = reply.data();
            int at = got.mismatch(ByteBuffer.wrap(message));
            if (at >= 0) {
                String what = reply.length() != size
                        ? reply.length() + " bytes instead of " + size
                        : String.format(java.util.Locale.ROOT, "byte %d is 0x%02x instead of 0x%02x", at,
                                got.get(at) & 0xff, message[at] & 0xff);
                throw new EchoException.Mismatch("reply " + index + " differs from the message sent: " + what,
                        index, at);
            }
        }
    }
}
