package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;

import io.micrometer.core.instrument.Metrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaCompletionException;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaMessage;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * On a real device (rxe in the VM): interoperation with plain librdmacm peers (rdma-core's rdma_server and
 * rdma_client: C programs that know nothing of this framework), cancellation while the device still owns
 * a buffer, and the Micrometer meters.
 */
@Tag(RxeTestSupport.TAG)
class PeersCancellationAndMetricsRxeTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    private final RxeResources resources = new RxeResources();
    private final List<DisposableRdmaServer> servers = resources.servers;
    private final List<RdmaConnection> clients = resources.clients;
    private final PeerProcesses processes = new PeerProcesses();

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        resources.close();
        processes.close();
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    /** rdma_client connects without private data, sends 16 bytes and waits for 16 back: our echo serves it. */
    @Test
    void aPlainLibrdmacmClientIsServedWithOrdinarySendRecv() throws Exception {
        Sinks.One<RdmaConnection> serverSide = Sinks.one();
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0).handle(c -> {
            serverSide.tryEmitValue(c);
            return c.send(c.receive().map(m -> {
                ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
                m.release();
                return copy;
            }));
        }).bindNow(WAIT);
        servers.add(server);
        Process client = processes.start("rdma_client", "-s", host(), "-p", Integer.toString(server.port()));
        String output = PeerProcesses.finish(client, "rdma_client");
        assertEquals(0, client.exitValue(), "rdma_client failed:\n" + output);
        RdmaConnection s = serverSide.asMono().block(WAIT);
        assertNotNull(s);
        assertFalse(s.creditFlowControl(), "a plain peer offers no credits: none are used");
        assertEquals(RdmaOption.RECEIVE_BUFFER_SIZE.defaultValue(), s.maxMessageSize(),
                "a plain peer announces no receive size: this side's own is the limit");
        // rdma_client disconnects when done: the server side closes by itself.
        s.onDispose().block(WAIT);
    }

    /** rdma_server accepts without private data, receives 16 bytes, sends 16 back and disconnects. */
    @Test
    void aPlainLibrdmacmServerIsReachedWithOrdinarySendRecv() throws Exception {
        int port = 20000 + (int) (ProcessHandle.current().pid() % 20000);
        Process server = processes.start("rdma_server", "-s", host(), "-p", Integer.toString(port));
        RdmaClient client = RdmaClient.create().host(host()).port(port);
        RdmaConnection c = PeerProcesses.connectWhenListening(client, server, WAIT);
        clients.add(c);
        assertFalse(c.creditFlowControl());
        RdmaConnection connection = c;
        StepVerifier.create(connection.receive())
                .then(() -> connection.send(ByteBuffer.wrap("sixteen bytes!!!".getBytes(StandardCharsets.US_ASCII)))
                        .subscribe())
                .assertNext(m -> {
                    assertEquals(16, m.length(), "rdma_server's 16-byte reply");
                    m.release();
                })
                // rdma_server disconnects after its reply: receive() completes, the connection closes.
                .expectComplete()
                .verify(WAIT);
        String output = PeerProcesses.finish(server, "rdma_server");
        assertEquals(0, server.exitValue(), "rdma_server failed:\n" + output);
        connection.onDispose().block(WAIT);
        StepVerifier.create(connection.events().map(ConnectionEvent::type).filter(t -> t == ConnectionEvent.Type.DISCONNECTED))
                .expectNextCount(1).expectComplete().verify(WAIT);
    }

    /**
     * A SEND that the peer cannot take (no receive posted, no credits) is retried by the device on RNR for
     * seconds. Cancelling its Mono (here by timeout) and releasing the buffer must not return the buffer to
     * the pool while the device may still read it: only the SEND's completion (RNR_RETRY_EXC_ERR) does.
     */
    @Test
    void cancellingAPostedSendKeepsItsBufferUntilTheDeviceIsDone() {
        ConcurrentLinkedQueue<Throwable> dropped = new ConcurrentLinkedQueue<>();
        Hooks.onErrorDropped(dropped::add);
        try {
            Sinks.One<RdmaConnection> serverSide = Sinks.one();
            // The server's RNR retry count is the one its accept gives the client's QP: 6 retries of rdma_cm's
            // RNR timer (655 ms) keep the SEND alive for seconds.
            DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                    .option(RdmaOption.CREDIT_FLOW_CONTROL, false)
                    .option(RdmaOption.RNR_RETRY_COUNT, 6)
                    .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 1)
                    .option(RdmaOption.MIN_RNR_TIMER, 0) // rdma_cm's 655 ms: the retries last seconds
                    .handle(c -> {
                        serverSide.tryEmitValue(c); // never receives
                        return c.onDispose();
                    }).bindNow(WAIT);
            servers.add(server);
            RdmaConnection client = RdmaClient.create().host(host()).port(server.port())
                    .option(RdmaOption.CREDIT_FLOW_CONTROL, false)
                    .connectNow(WAIT);
            clients.add(client);
            // Without credits the server posts its free buffers ahead of demand: one message fills its only one.
            client.send(ByteBuffer.allocate(8)).block(WAIT);
            BufferPool pool = (BufferPool) client.memory();
            long before = pool.pooledBytesInUse();
            RegisteredBuffer data = client.memory().allocate(1024); // above the inline limit: the device reads it
            long allocated = pool.pooledBytesInUse();
            assertTrue(allocated > before);
            long postedAt = System.nanoTime();
            StepVerifier.create(client.send(data).timeout(Duration.ofMillis(300)))
                    .expectError(TimeoutException.class)
                    .verify(WAIT);
            data.release();
            long checkedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - postedAt);
            assertFalse(client.isDisposed(), "the SEND is still being retried " + checkedMs + " ms after posting "
                    + "(if the device gave up this early, this test cannot observe the window)");
            EngineBuffer.Root root = ((EngineBuffer) data).root();
            assertEquals(allocated, pool.pooledBytesInUse(),
                    "released by its owner and cancelled, but the device still owns it: not back in the pool");
            assertEquals(1, root.holds(), "the posted SEND's hold is all that keeps it");
            // The device gives up (RNR_RETRY_EXC_ERR): the connection closes and only now the buffer returns.
            client.onDispose().block(WAIT);
            assertEquals(0, root.holds(), "the completion dropped the last hold: the buffer went back to the pool");
            assertTrue(dropped.isEmpty(), "nothing signalled to the cancelled subscriber: " + dropped);
        } finally {
            Hooks.resetOnErrorDropped();
        }
    }

    /**
     * A SEND the device is still retrying (the peer posted no receive) when the connection is closed: the QP
     * goes to ERR, the SEND's completion comes back flushed, and its Mono fails with ConnectionClosedException;
     * receive() completes and the buffer goes back.
     */
    @Test
    void closingFlushesPostedOperationsAndFailsThemTyped() {
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0)
                .option(RdmaOption.CREDIT_FLOW_CONTROL, false)
                .option(RdmaOption.RNR_RETRY_COUNT, 6) // the client's SEND keeps being retried for seconds
                .option(RdmaOption.RECEIVE_QUEUE_DEPTH, 1)
                .option(RdmaOption.MIN_RNR_TIMER, 0) // rdma_cm's 655 ms: the retries last seconds
                .handle(c -> c.onDispose()).bindNow(WAIT);
        servers.add(server);
        RdmaConnection client = RdmaClient.create().host(host()).port(server.port())
                .option(RdmaOption.CREDIT_FLOW_CONTROL, false).connectNow(WAIT);
        clients.add(client);
        // Without credits the server posts its free buffers ahead of demand: one message fills its only one.
        client.send(ByteBuffer.allocate(8)).block(WAIT);
        RegisteredBuffer data = client.memory().allocate(1024);
        EngineBuffer.Root root = ((EngineBuffer) data).root();
        Sinks.One<Throwable> failure = Sinks.one();
        client.send(data).subscribe(null, failure::tryEmitValue, () -> failure.tryEmitValue(null));
        data.release();
        assertEquals(1, root.holds(), "posted: the SEND holds the buffer");
        StepVerifier.create(client.receive())
                .then(client::dispose)
                .expectComplete()
                .verify(WAIT);
        StepVerifier.create(failure.asMono())
                .assertNext(e -> {
                    assertTrue(e instanceof io.reactiverdma.reactive.ConnectionClosedException, "flushed, got " + e);
                    assertTrue(e.getMessage().contains("flushed"), e.getMessage());
                })
                .expectComplete()
                .verify(WAIT);
        client.onDispose().block(WAIT);
        assertEquals(0, root.holds(), "the flush released the buffer");
    }

    @Test
    void metricsRecordOperationsBytesLatencyConnectionsAndErrors() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Metrics.addRegistry(registry);
        try {
            Sinks.One<RdmaConnection> serverSide = Sinks.one();
            DisposableRdmaServer server = RdmaServer.create().host(host()).port(0).metrics(true)
                    .handle(c -> {
                        serverSide.tryEmitValue(c);
                        return c.onDispose();
                    }).bindNow(WAIT);
            servers.add(server);
            RdmaConnection client = RdmaClient.create().host(host()).port(server.port()).metrics(true)
                    .connectNow(WAIT);
            clients.add(client);
            RdmaConnection s = serverSide.asMono().block(WAIT);
            assertNotNull(s);
            double sendsBefore = count(registry, "send", "success");
            double bytesBefore = bytes(registry, "send");
            double faaBefore = count(registry, "faa", "success");
            assertTrue(registry.get("rdma.connections").gauge().value() >= 2, "both ends counted");

            StepVerifier.create(s.receive().take(3).doOnNext(RdmaMessage::release).then())
                    .then(() -> client.send(Flux.range(0, 3).map(i -> ByteBuffer.allocate(100))).subscribe())
                    .expectComplete().verify(WAIT);
            RegisteredBuffer word = s.memory().allocateRegistered(8, RemoteAccess.ATOMIC);
            StepVerifier.create(client.fetchAndAdd(word.remoteRegion(), 5)).expectNext(0L).expectComplete().verify(WAIT);
            RegisteredBuffer readOnly = s.memory().allocateRegistered(8, RemoteAccess.READ);
            RegisteredBuffer local = client.memory().allocate(8);
            StepVerifier.create(client.write(local, readOnly.remoteRegion()))
                    .expectError(RdmaCompletionException.class).verify(WAIT);

            assertEquals(sendsBefore + 3, count(registry, "send", "success"));
            assertEquals(bytesBefore + 300, bytes(registry, "send"));
            assertEquals(faaBefore + 1, count(registry, "faa", "success"));
            assertTrue(registry.get("rdma.operation.latency").tag("op", "send").timer().count() >= 3);
            assertTrue(registry.get("rdma.completion.errors").tag("status", "REM_ACCESS_ERR").counter().count() >= 1);
            assertTrue(registry.get("rdma.poll.batch").summary().count() >= 1);
            assertTrue(registry.get("rdma.operations").tag("op", "recv").tag("outcome", "success").counter().count() >= 3);
            client.onDispose().block(WAIT);
            s.onDispose().block(WAIT);
            word.release();
            readOnly.release();
            local.release();
        } finally {
            Metrics.removeRegistry(registry);
        }
    }

    private static double count(SimpleMeterRegistry r, String op, String outcome) {
        var c = r.find("rdma.operations").tag("op", op).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    private static double bytes(SimpleMeterRegistry r, String op) {
        var c = r.find("rdma.bytes").tag("op", op).counter();
        return c == null ? 0 : c.count();
    }
}
