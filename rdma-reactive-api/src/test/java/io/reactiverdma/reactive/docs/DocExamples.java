package io.reactiverdma.reactive.docs;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The code shown in docs/getting-started.md and docs/programming-guide.md, compiled with the API module's
 * tests so that the guide cannot silently rot: an API change that breaks an example breaks this build. It
 * lives outside the API's package, so it sees only what an application sees. Methods that need an RDMA
 * device (and the engine) are compiled, not run; {@code DocExamplesTest} runs the ones that need neither.
 * Keep each method identical to its snippet in the docs.
 */
final class DocExamples {
    private DocExamples() {
    }

    // ------------------------------------------------------------------------------ getting-started.md
    static void helloRdma(String[] args) {
        String host = args[0]; // an IP address of the RDMA device's network interface
        DisposableRdmaServer server = RdmaServer.create().host(host).port(0)
                .handle(conn -> conn.send(conn.receive().map(m -> {  // echo every message back
                    ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                    m.release();                                     // the receive buffer goes back
                    return copy;
                })))
                .bindNow();
        RdmaConnection client = RdmaClient.create().host(host).port(server.port()).connectNow();
        Mono<String> reply = client.receive().next().map(m -> {
            try (m) {
                return StandardCharsets.UTF_8.decode(m.data()).toString();
            }
        });
        ByteBuffer hello = ByteBuffer.wrap("hello, RDMA".getBytes(StandardCharsets.UTF_8));
        // zip subscribes in order: the receive is posted before the message leaves
        String text = Mono.zip(reply, client.send(hello).thenReturn(true), (r, sent) -> r)
                .block(Duration.ofSeconds(30));
        System.out.println("reply: " + text);
        client.dispose();
        client.onDispose().block(Duration.ofSeconds(10));
        server.disposeNow();
    }

    // ---------------------------------------------------------------------- programming-guide.md
    /** Configuration: runs without a device (nothing is connected). */
    static RdmaClient configuredClient() {
        return RdmaClient.create()
                .host("10.0.0.1")
                .port(7471)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, 64 * 1024)   // the largest message this side receives
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 32)
                .connectTimeout(Duration.ofSeconds(3))                // client only: option(CONNECT_TIMEOUT, ..)
                .option(RdmaOption.IDLE_STRATEGY, PollerIdleStrategy.backoff())
                .callbackScheduler(Schedulers.boundedElastic())     // user callbacks off the poller thread
                .metrics(true);
    }

    /** A server: one handler per connection; the connection closes when the handler's Mono ends. */
    static DisposableRdmaServer echoServer(String host) {
        return RdmaServer.create()
                .host(host)
                .port(0)                                             // any free port: see server.port()
                .option(RdmaOption.COMPLETION_QUEUE_MODE, CompletionQueueMode.PER_CONNECTION)
                .handle(conn -> conn.receive()
                        .concatMap(m -> {
                            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                            m.release();
                            return conn.send(copy);
                        })
                        .then())
                .bindNow();
    }

    static void serverLifecycle(DisposableRdmaServer server) {
        Disposable watch = server.connectionEvents()
                .subscribe(e -> System.out.println(e.type() + " from " + e.peerAddress()));
        System.out.println("listening on " + server.host() + ":" + server.port()
                + ", " + server.connectionCount() + " connections open");
        server.disposeNow(Duration.ofSeconds(10));                   // stop listening, close every connection
        watch.dispose();
    }

    static Mono<RdmaConnection> connect(String host) {
        return RdmaClient.create().host(host)
                .option(RdmaOption.CONNECT_TIMEOUT, Duration.ofSeconds(3))
                .connect()                                           // lazy: each subscription connects
                .doOnNext(c -> System.out.println("connected to " + c.remoteAddress()
                        + ", credits " + c.creditFlowControl() + ", largest message " + c.maxMessageSize()))
                .onErrorMap(RdmaConnectException.class, e -> new IllegalStateException(
                        "cannot connect to " + host + ": " + e.reason() + " (status " + e.status() + ")", e));
    }

    static Disposable receive(RdmaConnection conn) {
        return conn.receive()
                .limitRate(32)                                       // at most 32 receives posted ahead
                .concatMap(m -> {
                    byte[] payload = m.toByteArray();                // copy out ...
                    m.release();                                     // ... and give the buffer back at once
                    return process(payload);
                })
                .doOnDiscard(RdmaMessage.class, RdmaMessage::release) // messages an operator drops
                .subscribe();
    }

    static Mono<Void> sendThreeWays(RdmaConnection conn) {
        // 1. bytes from anywhere: copied when the Mono is subscribed
        Mono<Void> copied = conn.send(ByteBuffer.wrap("ping".getBytes(StandardCharsets.UTF_8)));

        // 2. a registered buffer: sent from where it is, no copy
        RegisteredBuffer buffer = conn.memory().allocate(1024);
        buffer.buffer().putInt(0, 42);
        Mono<Void> zeroCopy = conn.send(buffer).doFinally(signal -> buffer.release());

        // 3. a stream: requested from upstream only as send slots and peer credits free up
        Flux<ByteBuffer> numbers = Flux.range(0, 10_000).map(i -> ByteBuffer.allocate(4).putInt(0, i));
        Mono<Void> stream = conn.send(numbers);

        return copied.then(zeroCopy).then(stream);
    }

    static Mono<Void> sendWithImmediate(RdmaConnection conn, RdmaConnection peer) {
        Mono<Integer> tag = peer.receive().next().map(m -> {
            try (m) {
                return m.hasImmediate() ? m.immediate() : -1;        // 7
            }
        });
        return Mono.zip(tag, conn.sendWithImmediate(ByteBuffer.wrap(new byte[] {1, 2, 3}), 7).thenReturn(0))
                .then();
    }

    /** Side A lends B a 1 MiB area that B may RDMA-WRITE and READ, and sends B its address and key. */
    static Mono<Void> lendRegion(RdmaConnection a) {
        RegisteredBuffer area = a.memory().allocateRegistered(1 << 20, RemoteAccess.WRITE, RemoteAccess.READ);
        return a.send(ByteBuffer.wrap(area.remoteRegion().toBytes()));
        // release the area (area.release()) once B is done with it: that deregisters it
    }

    /** Side B: takes the region from the message, WRITEs 4 KiB into it and READs another 4 KiB back. */
    static Mono<Void> writeThenRead(RdmaConnection b) {
        return b.receive().next()
                .map(m -> {
                    try (m) {
                        return RemoteRegion.fromBytes(m.toByteArray());
                    }
                })
                .flatMap(region -> {
                    RegisteredBuffer local = b.memory().allocate(4096);
                    local.buffer().put(0, "written by B".getBytes(StandardCharsets.UTF_8));
                    return b.write(local, region.slice(0, 4096))          // local -> A's bytes 0..4095
                            .then(b.read(local, region.slice(8192, 4096))) // A's bytes 8192.. -> local
                            .doFinally(signal -> local.release());         // safe: the operations hold it
                });
    }

    static Mono<Void> writeWithImmediate(RdmaConnection b, RegisteredBuffer local, RemoteRegion region) {
        // A's receive() gets a message of length 0 with immediate() == 1 once the data is in place
        return b.writeWithImmediate(local, region, 1);
    }

    /** The owner of the counter: 8 bytes, remote atomics allowed, in the host's native byte order. */
    static RegisteredBuffer counter(RdmaConnection owner) {
        RegisteredBuffer counter = owner.memory().allocateRegistered(8, RemoteAccess.ATOMIC);
        counter.buffer().order(ByteOrder.nativeOrder()).putLong(0, 100L);
        return counter;
    }

    static Mono<Boolean> atomics(RdmaConnection conn, RemoteRegion counter, RemoteRegion lock, long myId) {
        Mono<Long> ticket = conn.fetchAndAdd(counter, 1);                 // emits 100, the word becomes 101
        Mono<Boolean> locked = conn.compareAndSwap(lock, 0L, myId)         // emits the previous value
                .map(previous -> previous == 0L);                          // true: the swap happened
        return ticket.then(locked);
    }

    static void events(RdmaConnection conn) {
        conn.events()                                                      // replayed, then live
                .filter(e -> e.type() == ConnectionEvent.Type.DISCONNECTED
                        || e.type() == ConnectionEvent.Type.DEVICE_REMOVAL)
                .subscribe(e -> System.out.println("lost " + conn.remoteAddress() + ": " + e));
    }

    static void close(RdmaConnection conn) {
        conn.dispose();                                // asynchronous, idempotent
        conn.onDispose().block(Duration.ofSeconds(10)); // completes once everything was released
    }

    static Mono<Void> errors(RdmaConnection conn, RegisteredBuffer local, RemoteRegion remote) {
        return conn.read(local, remote)
                .timeout(Duration.ofSeconds(1))          // stops the signal, not the READ
                .onErrorResume(InvalidRequestException.class, e -> {
                    // refused before anything was posted; the connection is fine
                    System.out.println(e.reason() + ": " + e.getMessage());
                    return Mono.empty();
                })
                .doOnError(RdmaCompletionException.class, e -> System.out.println(
                        e.operation() + " failed with " + e.statusName() + ": the connection is closing"))
                .doOnError(ConnectionClosedException.class, e -> System.out.println(
                        "closed first, because of " + e.getCause()));
    }

    /** RemoteRegion's wire form: runs without a device. */
    static RemoteRegion regionRoundTrip(RemoteRegion region) {
        ByteBuffer message = ByteBuffer.allocate(RemoteRegion.ENCODED_SIZE + 4);
        region.writeTo(message).putInt(4096);          // the region, then an application field
        message.flip();
        RemoteRegion received = RemoteRegion.readFrom(message);
        int offset = message.getInt();
        return received.slice(offset, 8);
    }

    private static Mono<Void> process(byte[] payload) {
        return Mono.empty();
    }
}
