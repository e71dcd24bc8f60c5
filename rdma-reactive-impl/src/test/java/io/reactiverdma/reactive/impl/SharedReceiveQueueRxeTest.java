package io.reactiverdma.reactive.impl;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.micrometer.MicrometerRdmaRecorder;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * 1,000 concurrent connections to one server on a real device (rxe in the VM), each exchanging checked
 * messages through an echo. With a shared receive queue the server's pinned receive memory, read from its
 * {@code rdma.receive.memory} gauge while all 1,000 are open, is the SRQ's depth times the buffer size;
 * without, it is 1,000 times each connection's receive queue. The numbers and times are printed
 * ({@code SRQ-MEASURE}) for docs/server-guide.md.
 */
@Tag(RxeTestSupport.TAG)
class SharedReceiveQueueRxeTest {
    static final Duration WAIT = Duration.ofMinutes(3);
    static final int CONNECTIONS = 1000;
    static final int MESSAGES = 4;
    static final int BUFFER = 256;
    static final int SRQ_DEPTH = 512;
    static final int PER_CONNECTION = 8;

    private final RxeResources resources = new RxeResources();

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        // 1,000 closes one after the other would take minutes under emulation: all at once first.
        Flux.fromIterable(resources.clients).flatMap(c -> {
            c.dispose();
            return c.onDispose();
        }).then().block(WAIT);
        resources.close();
    }

    static ByteBuffer message(int conn, int seq) {
        ByteBuffer b = ByteBuffer.allocate(24).putInt(0, conn).putInt(4, seq);
        b.putLong(8, conn * 0x9E3779B97F4A7C15L ^ seq).putLong(16, ~(conn * 31L + seq));
        return b;
    }

    private static Mono<Void> echo(RdmaConnection c) {
        return c.send(c.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        }));
    }

    /** Opens all connections, exchanges checked messages on each, reads the gauge with all open; returns it. */
    private long thousandConnections(int srqDepth) {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DisposableRdmaServer server = RdmaServer.create().host(RxeTestSupport.deviceAddress()).port(0)
                .option(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, srqDepth)
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, PER_CONNECTION)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER)
                .option(RdmaOption.SEND_QUEUE_DEPTH, 4)
                .metrics(true, () -> MicrometerRdmaRecorder.of(registry))
                .handle(SharedReceiveQueueRxeTest::echo).bindNow(WAIT);
        resources.servers.add(server);
        RdmaClient client = RdmaClient.create().host(RxeTestSupport.deviceAddress()).port(server.port())
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, MESSAGES)
                .option(RdmaOption.RECEIVE_BUFFER_SIZE, BUFFER)
                .option(RdmaOption.SEND_QUEUE_DEPTH, MESSAGES)
                // 1,000 connects at once under emulation: set-up is serial on the rdma_cm threads.
                .option(RdmaOption.CONNECT_TIMEOUT, Duration.ofMinutes(2));
        long start = System.nanoTime();
        List<RdmaConnection> open = Flux.range(0, CONNECTIONS).flatMap(i -> client.connect(), 128)
                .collectList().block(WAIT);
        assertNotNull(open);
        resources.clients.addAll(open);
        long connected = System.nanoTime();
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicLong checked = new AtomicLong();
        Flux.range(0, CONNECTIONS).flatMap(i -> {
            RdmaConnection c = open.get(i);
            Mono<Void> back = c.receive().take(MESSAGES).index().doOnNext(t -> {
                ByteBuffer got = ByteBuffer.wrap(t.getT2().toByteArray());
                t.getT2().release();
                if (!got.equals(message(i, (int) (long) t.getT1()))) {
                    errors.add("connection " + i + ", message " + t.getT1() + " came back altered");
                } else {
                    checked.incrementAndGet();
                }
            }).then();
            return Mono.when(back, c.send(Flux.range(0, MESSAGES).map(s -> message(i, s))));
        }, CONNECTIONS).then().block(WAIT);
        long exchanged = System.nanoTime();
        assertEquals(List.of(), List.copyOf(errors));
        assertEquals((long) CONNECTIONS * MESSAGES, checked.get());
        assertEquals(CONNECTIONS, server.connectionCount());
        Gauge memory = registry.get("rdma.receive.memory").gauge();
        long bytes = (long) memory.value();
        System.out.printf("SRQ-MEASURE srqDepth=%d connections=%d receiveMemory=%d bytes connect=%d ms exchange=%d ms%n",
                srqDepth, CONNECTIONS, bytes, (connected - start) / 1_000_000, (exchanged - connected) / 1_000_000);
        return bytes;
    }

    @Test
    void thousandConnectionsWithAnSrqPinTheSrqOnly() {
        long bytes = thousandConnections(SRQ_DEPTH);
        assertEquals((long) SRQ_DEPTH * BUFFER, bytes, "the server's pinned receive memory is the SRQ's");
    }

    @Test
    void thousandConnectionsWithoutAnSrqPinAReceiveQueueEach() {
        long bytes = thousandConnections(0);
        assertEquals((long) CONNECTIONS * PER_CONNECTION * BUFFER, bytes, "each connection's own receive queue");
    }
}
