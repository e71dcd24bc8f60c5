package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.CompletionQueueMode;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaClient;
import io.reactiverdma.reactive.RdmaConnectException;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaServer;
import io.reactiverdma.testsupport.RxeTestSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On a real device (rxe in the VM): every CQ mode and idle strategy carries traffic, callbacks run where
 * the documentation says, and a connect cancelled midway leaves nothing open. (A throwing handler and an
 * unknown host are in {@link ConnectionContract}.)
 */
@Tag(RxeTestSupport.TAG)
class ModesAndCallbacksRxeTest {
    static final Duration WAIT = Duration.ofSeconds(60);

    private final RxeResources resources = new RxeResources();
    private final List<DisposableRdmaServer> servers = resources.servers;
    private final List<RdmaConnection> clients = resources.clients;
    private Scheduler scheduler;

    @BeforeEach
    void requireDevice() {
        RxeResources.requireDevice();
    }

    @AfterEach
    void close() {
        resources.close();
        if (scheduler != null) {
            scheduler.dispose();
        }
    }

    private static String host() {
        return RxeTestSupport.deviceAddress();
    }

    private DisposableRdmaServer echoServer(RdmaServer base) {
        DisposableRdmaServer s = base.host(host()).port(0).handle(c -> c.send(c.receive().map(m -> {
            ByteBuffer copy = ByteBuffer.wrap(m.toByteArray());
            m.release();
            return copy;
        }))).bindNow(WAIT);
        servers.add(s);
        return s;
    }

    private void echo(RdmaConnection c, int n) {
        StepVerifier.create(Mono.when(c.send(Flux.range(0, n).map(i -> ByteBuffer.allocate(16).putInt(0, i))),
                        c.receive().take(n).index().doOnNext(t -> {
                            assertEquals(t.getT1().intValue(), t.getT2().data().getInt(0), "echo order");
                            t.getT2().release();
                        }).then()))
                .expectComplete()
                .verify(WAIT);
    }

    @Test
    void everyCompletionQueueModeAndIdleStrategyCarriesTraffic() {
        // eventDriven(0): no spin, so every completion is taken after an arm and an event on the real device.
        PollerIdleStrategy[] strategies = {PollerIdleStrategy.eventDriven(), PollerIdleStrategy.eventDriven(0),
                PollerIdleStrategy.backoff(), PollerIdleStrategy.busySpin()};
        for (CompletionQueueMode mode : CompletionQueueMode.values()) {
            for (PollerIdleStrategy strategy : strategies) {
                DisposableRdmaServer server = echoServer(RdmaServer.create()
                        .option(RdmaOption.COMPLETION_QUEUE_MODE, mode).option(RdmaOption.IDLE_STRATEGY, strategy));
                RdmaConnection c = RdmaClient.create().host(host()).port(server.port())
                        .option(RdmaOption.COMPLETION_QUEUE_MODE, mode).option(RdmaOption.IDLE_STRATEGY, strategy)
                        .connectNow(WAIT);
                echo(c, 50);
                // Close at once: a busy-spinning poller must not starve the rest of this small VM for long.
                c.dispose();
                c.onDispose().block(WAIT);
                server.disposeNow(WAIT);
                servers.remove(server);
            }
        }
    }

    @Test
    void callbacksRunOnThePollerByDefaultAndOnTheConfiguredSchedulerOtherwise() {
        DisposableRdmaServer server = echoServer(RdmaServer.create());
        RdmaConnection plain = RdmaClient.create().host(host()).port(server.port()).connectNow(WAIT);
        clients.add(plain);
        AtomicReference<String> thread = new AtomicReference<>();
        AtomicReference<Throwable> blockOnPoller = new AtomicReference<>();
        StepVerifier.create(plain.send(ByteBuffer.allocate(8)).doOnSuccess(v -> {
                    thread.set(Thread.currentThread().getName());
                    try {
                        Mono.never().block(Duration.ofSeconds(30)); // a callback that blocks the poller
                    } catch (Throwable t) {
                        blockOnPoller.set(t);
                    }
                }))
                .expectComplete().verify(WAIT);
        assertTrue(thread.get().startsWith("rdma-poller-"), "default: the poller thread, got " + thread.get());
        assertTrue(blockOnPoller.get() instanceof IllegalStateException,
                "block() on the poller fails fast (NonBlocking thread), got " + blockOnPoller.get());

        scheduler = Schedulers.newSingle("app-callbacks");
        RdmaConnection moved = RdmaClient.create().host(host()).port(server.port()).callbackScheduler(scheduler)
                .connectNow(WAIT);
        clients.add(moved);
        AtomicReference<String> sendThread = new AtomicReference<>();
        AtomicReference<String> receiveThread = new AtomicReference<>();
        RdmaConnection connectedOn = RdmaClient.create().host(host()).port(server.port()).callbackScheduler(scheduler)
                .connect().doOnNext(c -> sendThread.set(Thread.currentThread().getName())).block(WAIT);
        clients.add(connectedOn);
        assertTrue(sendThread.get().startsWith("app-callbacks"), "connect's signal moved: " + sendThread.get());
        StepVerifier.create(Mono.when(
                        moved.send(ByteBuffer.allocate(8)).doOnSuccess(v -> sendThread.set(Thread.currentThread().getName())),
                        moved.receive().take(1).doOnNext(m -> {
                            receiveThread.set(Thread.currentThread().getName());
                            m.release();
                        }).then()))
                .expectComplete().verify(WAIT);
        assertTrue(sendThread.get().startsWith("app-callbacks"), "send's signal moved: " + sendThread.get());
        assertTrue(receiveThread.get().startsWith("app-callbacks"), "receive's signals moved: " + receiveThread.get());
    }

    @Test
    void aConnectCancelledMidwayLeavesNothingOpen() {
        Sinks.Many<RdmaConnection> accepted = Sinks.many().replay().all();
        DisposableRdmaServer server = RdmaServer.create().host(host()).port(0).handle(c -> {
            accepted.tryEmitNext(c);
            return c.onDispose();
        }).bindNow(WAIT);
        servers.add(server);
        RdmaClient client = RdmaClient.create().host(host()).port(server.port());
        // Cancel attempts at different points of the handshake; each either never got a connection or the
        // engine closes the one it made: the server sees every accepted connection close again.
        for (int delayMs = 0; delayMs <= 60; delayMs += 6) {
            client.connect().timeout(Duration.ofMillis(delayMs == 0 ? 1 : delayMs), Mono.empty()).subscribe(c -> clients.add(c));
        }
        RdmaConnection last = client.connectNow(WAIT); // the server is still fine
        clients.add(last);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.connectionCount() > clients.size() && System.nanoTime() < deadline) {
            sleep(50);
        }
        assertEquals(clients.size(), server.connectionCount(),
                "only the connections a subscriber received stay open on the server");
        assertNotNull(last);
    }

    @Test
    void addressesOutliveTheConnectionAndASlowServerEventSubscriberMissesNothing() {
        DisposableRdmaServer server = echoServer(RdmaServer.create());
        List<ConnectionEvent> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.publisher.BaseSubscriber<ConnectionEvent> slow = new reactor.core.publisher.BaseSubscriber<>() {
            @Override
            protected void hookOnSubscribe(org.reactivestreams.Subscription s) {
                // no demand yet: what the server emits meanwhile must wait, not vanish
            }

            @Override
            protected void hookOnNext(ConnectionEvent e) {
                seen.add(e);
            }
        };
        server.connectionEvents().subscribe(slow);
        resources.others.add(slow);

        RdmaConnection c = RdmaClient.create().host(host()).port(server.port()).connectNow(WAIT);
        java.net.InetSocketAddress local = c.localAddress();
        java.net.InetSocketAddress remote = c.remoteAddress();
        assertNotNull(local);
        assertEquals(server.port(), remote.getPort());
        c.dispose();
        c.onDispose().block(WAIT);
        assertEquals(local, c.localAddress(), "localAddress after close");
        assertEquals(remote, c.remoteAddress(), "remoteAddress after close");

        long deadline = System.nanoTime() + WAIT.toNanos();
        while (server.connectionCount() > 0 && System.nanoTime() < deadline) {
            sleep(50);
        }
        slow.request(Long.MAX_VALUE);
        List<ConnectionEvent.Type> types = seen.stream().map(ConnectionEvent::type).toList();
        assertTrue(types.contains(ConnectionEvent.Type.CONNECT_REQUEST) && types.contains(ConnectionEvent.Type.ESTABLISHED)
                && types.contains(ConnectionEvent.Type.CLOSED), "events emitted before there was demand: " + types);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
