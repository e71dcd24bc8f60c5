package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.verbs.WcStatus;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Isolation between the peers of one server, on any stack (the loopback device on the host, rxe in the VM):
 * clients that RDMA-WRITE into another client's credit word on the server, with that client's own address
 * and rkey (as it learnt them: the accept reply's private data) or with a guessed rkey, must get a remote
 * access error, and the server must keep serving the other clients, whose checked messages still echo.
 *
 * <p>What a client learns of its credit word on the server is in the accept reply (see
 * {@code connection.Negotiation}): the address at bytes 8..16 and the rkey at 16..20, big-endian.
 */
final class PeerIsolationScenario {
    private final RdmaEngine engine;
    private final String host;
    private final Duration wait;
    private final List<RdmaConnection> opened = new ArrayList<>();
    private DisposableRdmaServer server;

    PeerIsolationScenario(RdmaEngine engine, String host, Duration wait) {
        this.engine = engine;
        this.host = host;
        this.wait = wait;
    }

    private RdmaTransportConfig config() {
        return RdmaTransportConfig.defaults().withHost(host).withPort(0)
                .withOption(RdmaOption.CREDIT_FLOW_CONTROL, true)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 16);
    }

    /** An echo server: every message comes back as it was. */
    void startServer() {
        server = engine.bind(config(), c -> c.send(c.receive().map(m -> {
            try {
                return ByteBuffer.wrap(m.toByteArray());
            } finally {
                m.release();
            }
        }))).block(wait);
        assertNotNull(server);
    }

    RdmaConnection connect() {
        RdmaConnection c = engine.connect(config().withPort(server.port())).block(wait);
        assertNotNull(c);
        opened.add(c);
        return c;
    }

    /** The client's credit word on the server, from the accept reply the client got. */
    RemoteRegion creditWordOnServer(RdmaConnection client) {
        ConnectionEvent established = client.events().filter(e -> e.type() == ConnectionEvent.Type.ESTABLISHED)
                .next().block(wait);
        assertNotNull(established, "no ESTABLISHED event");
        ByteBuffer reply = ByteBuffer.wrap(established.privateData());
        return RemoteRegion.of(reply.getLong(8), 8, reply.getInt(16));
    }

    /** Sends {@code count} numbered messages and checks that each comes back unchanged and in order. */
    Mono<Void> exchange(RdmaConnection c, String name, int count) {
        Flux<String> echoes = c.receive().take(count).map(PeerIsolationScenario::text);
        Mono<Void> sends = Flux.range(0, count).concatMap(i -> c.send(ByteBuffer.wrap(message(name, i)))).then();
        return Mono.when(sends, echoes.index().doOnNext(t -> assertEquals(new String(message(name, (int) (long) t.getT1()),
                StandardCharsets.UTF_8), t.getT2(), name + ": message " + t.getT1())).count()
                .doOnNext(n -> assertEquals(count, (long) n, name + ": echoes")));
    }

    private static byte[] message(String name, int i) {
        return (name + " message " + i + " " + "x".repeat(i % 50)).getBytes(StandardCharsets.UTF_8);
    }

    private static String text(RdmaMessage m) {
        try {
            return new String(m.toByteArray(), StandardCharsets.UTF_8);
        } finally {
            m.release();
        }
    }

    /**
     * From a fresh connection, writes a huge receive total (the server would think the victim posted 2^40
     * receives and overrun it) into {@code target}: must fail with REM_ACCESS_ERR and close the attacker.
     */
    void attackMustFail(RemoteRegion target, String what) {
        RdmaConnection attacker = connect();
        mustFail(attacker, target, what);
        attacker.onDispose().block(wait); // a remote access error closes the attacker's connection
    }

    /**
     * A guess of a neighbour's credit-word rkey: its 24-bit index (easy: indexes are handed out in order) with
     * the attacker's own 8-bit key, at the neighbour's address.
     */
    static RemoteRegion guess(RemoteRegion neighbour, RemoteRegion own) {
        return RemoteRegion.of(neighbour.address(), 8, (neighbour.rkey() & ~0xff) | (own.rkey() & 0xff));
    }

    /** The whole scenario: two victims, attacks with a known and a guessed rkey, the victims still served. */
    void run(int messages) {
        startServer();
        RdmaConnection v1 = connect();
        RdmaConnection v2 = connect();
        Mono.when(exchange(v1, "v1", messages), exchange(v2, "v2", messages)).block(wait);
        RemoteRegion v1Word = creditWordOnServer(v1);
        RemoteRegion v2Word = creditWordOnServer(v2);

        attackMustFail(v1Word, "v1's own address and rkey");
        RdmaConnection guesser = connect();
        RemoteRegion own = creditWordOnServer(guesser);
        guesser.dispose();
        attackMustFail(guess(v2Word, own), "a guessed rkey for v2's word");
        attackMustFail(RemoteRegion.of(v2Word.address(), 8, v2Word.rkey()), "v2's own address and rkey");

        Mono.when(exchange(v1, "v1 after", messages), exchange(v2, "v2 after", messages)).block(wait);
        RdmaConnection late = connect();
        exchange(late, "late", messages).block(wait);
    }

    /**
     * Regions exposed per connection: a server exposes to each client its own 64 bytes (registered with no
     * remote access: reachable through the window only) and sends it the region. A client writes and reads
     * its own; another client that uses it gets REM_ACCESS_ERR; after a revoke its owner gets it too; a
     * region is revoked when its connection closes; the buffers' holds are all dropped in the end.
     */
    void runExposed() {
        java.util.Map<Integer, io.reactiverdma.reactive.ExposedRegion> exposed = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Map<Integer, RegisteredBuffer> memory = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.atomic.AtomicInteger ids = new java.util.concurrent.atomic.AtomicInteger();
        server = engine.bind(config(), c -> {
            int id = ids.getAndIncrement();
            RegisteredBuffer mine = c.memory().allocateRegistered(64);
            memory.put(id, mine);
            return c.expose(mine, io.reactiverdma.reactive.RemoteAccess.WRITE, io.reactiverdma.reactive.RemoteAccess.READ)
                    .flatMap(r -> {
                        exposed.put(id, r);
                        ByteBuffer m = ByteBuffer.allocate(4 + RemoteRegion.ENCODED_SIZE).putInt(id);
                        r.remoteRegion().writeTo(m);
                        return c.send(m.flip());
                    })
                    .then(c.onDispose());
        }).block(wait);
        assertNotNull(server);
        RdmaConnection a = connect();
        RdmaConnection b = connect();
        Received ra = region(a);
        Received rb = region(b);

        writeAndReadBack(a, ra.region, "a's own region");
        writeAndReadBack(b, rb.region, "b's own region");
        assertEquals("a's own region", new String(bytes(memory.get(ra.id), 14), StandardCharsets.UTF_8));

        mustFail(b, ra.region, "b writes a's exposed region");
        b.onDispose().block(wait);
        writeAndReadBack(a, ra.region, "a's own, still");

        exposed.get(ra.id).revoke().block(wait);
        mustFail(a, ra.region, "a writes its region after the revoke");
        a.onDispose().block(wait);

        RdmaConnection c = connect();
        Received rc = region(c);
        writeAndReadBack(c, rc.region, "c's own region");
        c.dispose();
        c.onDispose().block(wait);
        exposed.get(rc.id).revoke().block(wait); // revoked with its connection
        for (RegisteredBuffer m : memory.values()) {
            m.release();
            assertEquals(true, m.isReleased());
        }
    }

    private record Received(int id, RemoteRegion region) {
    }

    private Received region(RdmaConnection c) {
        RdmaMessage m = c.receive().next().block(wait);
        assertNotNull(m);
        try {
            ByteBuffer b = ByteBuffer.wrap(m.toByteArray());
            return new Received(b.getInt(), RemoteRegion.readFrom(b));
        } finally {
            m.release();
        }
    }

    private void writeAndReadBack(RdmaConnection c, RemoteRegion target, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        RegisteredBuffer out = c.memory().allocate(bytes.length);
        RegisteredBuffer in = c.memory().allocate(bytes.length);
        try {
            out.buffer().put(bytes);
            c.write(out, target).block(wait);
            c.read(in, target.slice(0, bytes.length)).block(wait);
            assertEquals(text, new String(bytes(in, bytes.length), StandardCharsets.UTF_8));
        } finally {
            out.release();
            in.release();
        }
    }

    private static byte[] bytes(RegisteredBuffer b, int n) {
        byte[] x = new byte[n];
        b.buffer().get(x);
        return x;
    }

    /** Writes a huge receive total (2^40) into {@code target}: must fail with REM_ACCESS_ERR. */
    private void mustFail(RdmaConnection c, RemoteRegion target, String what) {
        RegisteredBuffer word = c.memory().allocate(8);
        try {
            word.buffer().order(ByteOrder.nativeOrder()).putLong(0, 1L << 40);
            Throwable error = null;
            try {
                c.write(word, target).block(wait);
            } catch (RuntimeException e) {
                error = reactor.core.Exceptions.unwrap(e);
            }
            if (error == null) {
                fail(what + ": the write into " + target + " succeeded");
            }
            RdmaCompletionException e = assertInstanceOf(RdmaCompletionException.class, error, what);
            assertEquals(WcStatus.REM_ACCESS_ERR.value(), e.status(), what + ": " + e.getMessage());
        } finally {
            word.release();
        }
    }

    void close() {
        for (RdmaConnection c : opened) {
            c.dispose();
            c.onDispose().block(wait);
        }
        if (server != null) {
            server.disposeNow(wait);
        }
    }
}
