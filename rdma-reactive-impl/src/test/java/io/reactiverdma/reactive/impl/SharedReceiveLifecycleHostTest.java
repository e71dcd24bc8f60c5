package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.DisposableRdmaServer;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackQueuePair;
import io.reactiverdma.reactive.impl.loopback.LoopbackResources.Kind;
import io.reactiverdma.reactive.impl.loopback.LoopbackSharedReceiveQueue;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import io.reactiverdma.verbs.AsyncEventType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server's shared receive queue through faults only the loopback device can inject (engine-defects.md,
 * findings 13 and 15): a device whose CQs are smaller than the SRQ, an SRQ_ERR, and a QP number reused while
 * the connection that had it is still on the SRQ. Loopback only: rxe can neither raise SRQ_ERR on demand nor
 * be made to hand out a live QP's number.
 */
@Timeout(120)
class SharedReceiveLifecycleHostTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    private LoopbackStack stack;
    private SharedReceiveAttackScenario scenario;

    @AfterEach
    void close() {
        try {
            if (scenario != null) {
                scenario.close();
            }
        } finally {
            if (stack != null) {
                stack.close();
            }
        }
    }

    private SharedReceiveAttackScenario scenario(LoopbackStack s) {
        stack = s;
        scenario = new SharedReceiveAttackScenario(new RdmaEngine(s), s, "127.0.0.1", WAIT, Duration.ofSeconds(1));
        return scenario;
    }

    private static RdmaTransportConfig client() {
        return RdmaTransportConfig.defaults().withHost("127.0.0.1")
                .withOption(RdmaOption.RECEIVE_BUFFER_SIZE, RawCreditPeer.BUFFER)
                .withOption(RdmaOption.CONNECT_TIMEOUT, WAIT);
    }

    private static long srqPollers() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("rdma-poller-") && t.getName().endsWith("-srq"))
                .count();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() - deadline < 0, "not within " + WAIT + ": " + what);
            Thread.onSpinWait();
        }
    }

    /**
     * An SRQ deeper than the device's CQs cannot be made: each connection request tries and is rejected. Before
     * (finding 15a), each attempt left its CQ and poller thread running for good.
     */
    @Test
    void anSrqTheCqCannotHoldLeavesNoCqOrPollerBehind() {
        stack = LoopbackStack.builder().device("loopback0", "127.0.0.1").maxCqe(64).build();
        RdmaEngine engine = new RdmaEngine(stack);
        long pollersBefore = srqPollers();
        RdmaTransportConfig small = client().withOption(RdmaOption.SEND_QUEUE_DEPTH, 8)
                .withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 4); // fits the device's CQs of 64
        DisposableRdmaServer server = engine.bind(small.withPort(0)
                .withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 128), SharedReceiveAttackScenario::echo).block(WAIT);
        assertNotNull(server);
        try {
            for (int i = 0; i < 3; i++) {
                RuntimeException e = assertThrows(RuntimeException.class,
                        () -> engine.connect(small.withPort(server.port())).block(WAIT));
                assertTrue(String.valueOf(e.getMessage()).contains("max_cqe"), "rejected for its SRQ: " + e);
            }
            await(() -> srqPollers() == pollersBefore, "the SRQ pollers of the failed attempts stopped (alive: "
                    + (srqPollers() - pollersBefore) + ")");
        } finally {
            server.disposeNow(WAIT);
        }
    }

    /**
     * After SRQ_ERR every connection on the SRQ closes, and the next ones get a new SRQ. Before (finding 15b)
     * they joined the broken one, on which nothing was posted any more, and were rejected at ACCEPT_TIMEOUT.
     * Both SRQs are destroyed when the server is done.
     */
    @Test
    void afterSrqErrNewConnectionsGetANewSrq() {
        SharedReceiveAttackScenario s = scenario(LoopbackStack.create());
        s.startServer(SharedReceiveAttackScenario::echo);
        RdmaConnection a = s.connect(client());
        s.exchange(a, "a", 8).block(WAIT);
        List<Object> srqs = stack.resources().objects(Kind.SHARED_RECEIVE_QUEUE);
        assertEquals(1, srqs.size());
        stack.faults().raiseSrqEvent((LoopbackSharedReceiveQueue) srqs.get(0), AsyncEventType.SRQ_ERR);
        a.onDispose().block(WAIT);
        RdmaConnection b = s.connect(client());
        s.exchange(b, "b", 8).block(WAIT);
        assertEquals(2, stack.resources().objects(Kind.SHARED_RECEIVE_QUEUE).size(), "a new SRQ beside the broken one");
        s.close();
        scenario = null;
        await(() -> stack.resources().count(Kind.SHARED_RECEIVE_QUEUE) == 0, "both SRQs destroyed");
    }

    /**
     * On an mlx-like device (loopback {@code cleanCqOnDestroy}: destroying a QP removes its unpolled completions,
     * and the SRQ receives they stood for vanish), connections closed while their messages are still in the
     * CQ must not lose SRQ buffers: every buffer comes back to the SRQ, and a new client then exchanges as
     * many messages as the SRQ holds, on credits, without RNR. Before (finding 5) the QP was destroyed right
     * after the disconnect, without waiting for QP_LAST_WQE_REACHED and draining the CQ. Loopback only: rxe
     * does not clean CQs, and no mlx hardware is at hand. The server polls one completion per cycle
     * ({@code POLL_BATCH_SIZE} 1), so the messages are still unpolled when its handler closes the connection,
     * and the handler then keeps the poller busy for up to 2 s (as load would), during which the QP may be
     * destroyed.
     */
    @Test
    void onAnMlxLikeDeviceAClosedConnectionsUnpolledMessagesDoNotCostSrqBuffers() {
        stack = LoopbackStack.builder().device("loopback0", "127.0.0.1").cleanCqOnDestroy(true).build();
        RdmaEngine engine = new RdmaEngine(stack);
        RdmaTransportConfig base = client().withOption(RdmaOption.RECEIVE_QUEUE_DEPTH, 8);
        DisposableRdmaServer server = engine.bind(base.withPort(0).withOption(RdmaOption.SHARED_RECEIVE_QUEUE_DEPTH, 16)
                .withOption(RdmaOption.POLL_BATCH_SIZE, 1), c -> c.receive().take(8).next().doOnNext(m -> {
                    m.release();
                    long qps = stack.resources().count(Kind.QUEUE_PAIR);
                    c.dispose(); // on the poller, with the other messages still in the CQ
                    // The poller stays busy a while (as under load): the rdma_cm thread may destroy the QP now.
                    long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
                    while (stack.resources().count(Kind.QUEUE_PAIR) == qps && System.nanoTime() - until < 0) {
                        Thread.onSpinWait();
                    }
                }).then()).block(WAIT);
        assertNotNull(server);
        try {
            for (int round = 0; round < 5; round++) {
                RdmaConnection c = engine.connect(base.withPort(server.port())).block(WAIT);
                assertNotNull(c);
                for (int i = 0; i < 8; i++) {
                    c.send(java.nio.ByteBuffer.allocate(16)).subscribe(null, e -> { }); // some fail: closed
                }
                c.onDispose().block(WAIT);
            }
            await(() -> server.connectionCount() == 0, "the server's connections closed");
            LoopbackSharedReceiveQueue srq = (LoopbackSharedReceiveQueue) stack.resources()
                    .objects(Kind.SHARED_RECEIVE_QUEUE).get(0);
            await(() -> srq.posted() == 16, "all 16 buffers posted on the SRQ again (posted: " + srq.posted() + ")");
            RdmaConnection c = engine.connect(base.withPort(server.port()).withOption(RdmaOption.RNR_RETRY_COUNT, 0))
                    .block(WAIT);
            assertNotNull(c);
            c.dispose();
            c.onDispose().block(WAIT);
        } finally {
            server.disposeNow(WAIT);
        }
    }

    /**
     * A new connection whose QP has the number of a connection still on the SRQ is refused (closed before its
     * accept). Before (finding 13), it replaced the old connection in the SRQ's table, so the old
     * connection's messages were delivered to the new one's handler, and its echo never came back.
     */
    @Test
    void aQpNumberStillOnTheSrqIsRefusedAndItsConnectionKeepsItsMessages() {
        SharedReceiveAttackScenario s = scenario(LoopbackStack.create());
        s.startServer(SharedReceiveAttackScenario::echo);
        RdmaConnection a = s.connect(client());
        s.exchange(a, "a", 8).block(WAIT);
        int serverSideOfA = 0;
        int highest = 0;
        for (Object o : stack.resources().objects(Kind.QUEUE_PAIR)) {
            highest = Math.max(highest, ((LoopbackQueuePair) o).qpNum());
        }
        serverSideOfA = highest; // created last, on the connection request
        stack.faults().nextQpNumbers(highest + 1, serverSideOfA); // b's client QP, then b's server QP
        assertThrows(RuntimeException.class, () -> s.connect(client()));
        s.exchange(a, "a after", 8).block(WAIT);
    }
}
