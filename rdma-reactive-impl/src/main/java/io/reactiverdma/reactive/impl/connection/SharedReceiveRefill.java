package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.completion.CompletionPoller;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.support.EngineLog;

import java.util.ArrayDeque;

/**
 * The refill of a {@link SharedReceives}: its free buffers posted again as chains (through its
 * {@link ReceiveRing}), then receives kept for the peers' hellos that wait for one, in order, then the
 * connections waiting for credits served in turn by its {@link CreditAllotment}. A refill runs once an eighth
 * of the depth (at most a chain) is free, at once when a connection or a hello waits, and when the SRQ runs
 * low.
 *
 * <p>Not thread-safe: the shared queue's poller thread only (asserted: {@link OwnerThread}).
 */
final class SharedReceiveRefill {
    private final String description;
    private final CompletionPoller poller;
    private final ReceiveRing ring;
    private final CreditAllotment allotment;
    private final EngineMetrics metrics;
    private final int repostBatch;
    /** Members waiting until a posted receive can be kept for their peer's hello, in order. */
    private final ArrayDeque<SharedReceiveMember> helloWaiters = new ArrayDeque<>();
    private boolean refilling;

    SharedReceiveRefill(String description, CompletionPoller poller, ReceiveRing ring, CreditAllotment allotment,
            EngineMetrics metrics, int repostBatch) {
        this.description = description;
        this.poller = poller;
        this.ring = ring;
        this.allotment = allotment;
        this.metrics = metrics;
        this.repostBatch = repostBatch;
    }

    /**
     * {@code m}'s peer will send a hello: true when a posted receive is kept for it now; otherwise {@code m}
     * waits its turn, in order, for a refill ({@link SharedReceiveMember#receiveKeptForHello()}).
     */
    boolean keepReceiveForHello(SharedReceiveMember m) {
        assert OwnerThread.check(poller);
        if (helloWaiters.isEmpty() && allotment.backHello()) {
            return true;
        }
        helloWaiters.add(m);
        return false;
    }

    void noLongerWaitingForHello(SharedReceiveMember m) {
        helloWaiters.remove(m);
    }

    /** Refills when enough buffers are free to make a chain worth it, or when someone waits. */
    void maybeRefill() {
        if (ring.freeCount() >= repostBatch || allotment.hasWaiters() || !helloWaiters.isEmpty()) {
            refill();
        }
    }

    /** Posts the free buffers, then gives the waiting connections their credits in turn. */
    void refill() {
        assert OwnerThread.check(poller);
        if (refilling) {
            return; // a member served below asked again: the loop already running serves it
        }
        refilling = true;
        try {
            repostFree();
            serveHelloWaiters();
            serveWaiters();
        } finally {
            refilling = false;
        }
    }

    private void repostFree() {
        int accepted = ring.post(ring.freeCount());
        allotment.reposted(accepted);
        metrics.outstanding(accepted);
        RuntimeException failure = ring.refusal();
        if (failure != null) {
            EngineLog.error(description + ": ibv_post_srq_recv failed", failure);
        }
    }

    /** Keeps posted receives for the hellos that wait for one, in order, as far as the refill allows. */
    private void serveHelloWaiters() {
        while (!helloWaiters.isEmpty() && allotment.backHello()) {
            helloWaiters.poll().receiveKeptForHello();
        }
    }

    /** Each connection waiting when this starts gets one turn at most (a waiter at its share waits again). */
    private void serveWaiters() {
        int turns = allotment.waiting();
        while (turns-- > 0 && allotment.unallotted() > 0) {
            CreditAllotment.Share s = allotment.nextWaiter();
            if (s == null) {
                break;
            }
            try {
                ((SharedReceiveMember) s).receive().creditsAvailable();
            } finally {
                allotment.endTurn();
            }
        }
    }
}
