package io.reactiverdma.reactive.impl;

import io.reactiverdma.reactive.PollerIdleStrategy;
import io.reactiverdma.reactive.RdmaConnection;
import io.reactiverdma.reactive.RdmaOption;
import io.reactiverdma.reactive.RdmaTransportConfig;
import io.reactiverdma.reactive.impl.loopback.LoopbackCompletionQueue;
import io.reactiverdma.reactive.impl.loopback.LoopbackStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The event-driven poller spins a bounded number of polls after work before it arms the CQ and sleeps, so
 * the completion of a request it has just posted is found by polling, without a completion event, a system
 * call and a thread wake-up. Loopback-only: it counts the CQ's arms and event wake-ups, which only the
 * loopback device exposes (on rxe the same effect is what scripts/bench-vm measures against perftest -e).
 */
@Timeout(120)
class EventDrivenSpinHostTest extends LoopbackEngineTestBase {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final int WARM_UP = 50;
    private static final int REQUESTS = 200;

    /**
     * The wire executes a post this long after it: longer than a poller that does not spin takes to arm and
     * sleep, however late the machine runs it (without it, a loaded CI machine let the wire beat the poller's
     * last poll: 6 wake-ups for 200 sends once, where 93-157 were usual), and far shorter than the generous
     * spin below.
     */
    private static final Duration WIRE_LATENCY = Duration.ofMillis(1);

    @Override
    LoopbackStack newStack() {
        return LoopbackStack.builder().device("loopback0", "127.0.0.1", "10.77.0.1").wireLatency(WIRE_LATENCY).build();
    }

    /** Sends {@link #REQUESTS} messages one at a time, each awaited; returns the CQs' event wake-ups meanwhile. */
    private long eventWakeUpsForWaitedForSends(PollerIdleStrategy strategy) {
        RdmaTransportConfig config = localConfig().withOption(RdmaOption.IDLE_STRATEGY, strategy);
        bindServer(config);
        client = engine.connect(config.withPort(server.port())).block(WAIT);
        assertNotNull(client);
        RdmaConnection peer = serverConnection.asMono().block(WAIT);
        assertNotNull(peer);
        AtomicInteger received = new AtomicInteger();
        Disposable receiving = peer.receive(m -> received.incrementAndGet()).subscribe();
        try {
            for (int i = 0; i < WARM_UP; i++) {
                client.send(ByteBuffer.allocate(64)).block(WAIT);
            }
            long before = eventWakeUps();
            for (int i = 0; i < REQUESTS; i++) {
                client.send(ByteBuffer.allocate(64)).block(WAIT);
            }
            return eventWakeUps() - before;
        } finally {
            receiving.dispose();
        }
    }

    private long eventWakeUps() {
        long n = 0;
        for (LoopbackCompletionQueue q : stack.devices().get(0).completionQueues()) {
            n += q.eventWakeUps();
        }
        return n;
    }

    /**
     * A spin well past the wire's latency on a loaded machine (each empty poll is ~0.1 us here, so this is up
     * to 100 ms; a spin ends at the completion it finds, so the bound costs nothing); the spin that wins on
     * rxe is the default (docs/performance.md).
     */
    private static final long GENEROUS_SPIN = 1_000_000;

    @Test
    void aJustPostedSendCompletesWithoutACompletionEvent() {
        long wakeUps = eventWakeUpsForWaitedForSends(PollerIdleStrategy.eventDriven(GENEROUS_SPIN));
        assertTrue(wakeUps < REQUESTS / 10, wakeUps + " completion-event wake-ups for " + REQUESTS
                + " waited-for sends: the poller armed and slept before the completion of what it had just posted");
    }

    /**
     * What the spin removes: without it the poller sleeps before many completions of its own posts (157 of 200
     * on JDK 17, 93 on JDK 25 here: how often the loopback's wire thread beats the poll after the arm varies).
     */
    @Test
    void withoutASpinThePollerSleepsBeforeTheCompletionOfWhatItJustPosted() {
        long wakeUps = eventWakeUpsForWaitedForSends(PollerIdleStrategy.eventDriven(0));
        assertTrue(wakeUps >= REQUESTS / 5, "only " + wakeUps + " completion-event wake-ups for " + REQUESTS
                + " waited-for sends without a spin");
    }
}
