package io.reactiverdma.reactive.impl;

import io.reactiverdma.cm.CmEventType;
import io.reactiverdma.reactive.ConnectionEvent;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackCmId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * The receive side of a connection under faults only the loopback device injects (delayed rdma_cm events,
 * a busy shared poller, a reused QP number). What rxe can show too is in {@link PlainPeerScenario}.
 */
@Timeout(60)
class ReceiveSideLoopbackTest extends LoopbackEngineTestBase {
    static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * The receives a server handler asks for are posted before rdma_accept: a peer without credits (here an
     * engine client with CREDIT_FLOW_CONTROL off and no RNR retry) may send as soon as it is established,
     * while the server's own ESTABLISHED is still on its way (delayed 1 s here: a busy rdma_cm thread).
     * Loopback only: the delay is an injected fault.
     */
    @Test
    void aServerPostsTheHandlersReceivesBeforeAcceptingSoAPeerWithoutCreditsMaySendAtOnce() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        Sinks.One<String> got = Sinks.one();
        server = engine.bind(config, c -> c.receive().next().doOnNext(m -> {
            try {
                got.tryEmitValue(new String(m.toByteArray(), StandardCharsets.UTF_8));
            } finally {
                m.release();
            }
        }).then(c.onDispose())).block(WAIT);
        assertNotNull(server);
        stack.faults().delayEvents(CmEventType.ESTABLISHED, Duration.ofSeconds(1), 1); // the server's comes first
        client = engine.connect(config.withPort(server.port()).withOption(RdmaOption.RNR_RETRY_COUNT, 0)).block(WAIT);
        assertNotNull(client);
        StepVerifier.create(client.send(ByteBuffer.wrap("at once".getBytes(StandardCharsets.UTF_8))))
                .expectComplete()
                .verify(WAIT);
        assertEquals("at once", got.asMono().block(WAIT));
    }

    /**
     * rdma_cm brings a QP up with min_rnr_timer 0 (655 ms): the engine sets MIN_RNR_TIMER on both sides once
     * their QPs are in RTS (the loopback resets the code on connect as rdma_cm's RTR transition does).
     */
    @Test
    void bothSidesQueuePairsCarryTheMinRnrTimerOption() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.MIN_RNR_TIMER, 5);
        bindServer(config);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        assertNotNull(serverConnection.asMono().block(WAIT));
        List<LoopbackCmId> connected = stack.liveIds().stream().filter(id -> id.queuePair() != null).toList();
        assertEquals(2, connected.size(), "the client's and the server's ids");
        for (LoopbackCmId id : connected) {
            assertEquals(5, id.queuePair().minRnrTimer(), id.description());
        }
    }

    /**
     * A server connection disposed by its handler before the accept (no credits, so nothing else waits) rejects
     * its peer with SERVER_ERROR while its id still exists, and the server's events say REJECTED.
     */
    @Test
    void aConnectionTheHandlerDisposesBeforeTheAcceptIsRejectedWithServerError() {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.CREDIT_FLOW_CONTROL, false);
        server = engine.bind(config, c -> {
            c.dispose();
            return c.onDispose();
        }).block(WAIT);
        assertNotNull(server);
        reactor.core.publisher.Mono<ConnectionEvent> rejected = server.connectionEvents()
                .filter(e -> e.type() == ConnectionEvent.Type.REJECTED).next().cache();
        rejected.subscribe();
        StepVerifier.create(engine.connect(config.withPort(server.port())))
                .expectErrorSatisfies(e -> assertEquals(ConnectionRejectedException.Rejection.SERVER_ERROR,
                        assertInstanceOf(ConnectionRejectedException.class, e).rejection(), e.toString()))
                .verify(WAIT);
        assertNotNull(rejected.block(WAIT));
    }
}
