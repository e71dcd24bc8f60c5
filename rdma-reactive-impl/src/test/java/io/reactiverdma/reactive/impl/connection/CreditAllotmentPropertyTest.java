package io.reactiverdma.reactive.impl.connection;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The SRQ credit allotment under random schedules of many connections: random demand, peers sending only
 * with credits (as credit flow control makes them), messages released in random order and at random times,
 * buffers reposted late. After every step: credits never exceed the receives posted (so no sender meets RNR),
 * no connection holds more than its cap, every buffer is somewhere. At the end, once consumers keep
 * releasing, every connection's demand is met (no starvation), whatever the schedule.
 *
 * <p>The driver does what {@link SharedReceives} and {@link ReceiveQueue} do with the allotment: demand not
 * covered is granted as far as {@link CreditAllotment#available} allows, the rest waits; waiters are served
 * in turn when buffers are reposted.
 */
class CreditAllotmentPropertyTest {
    /** One connection and its peer. */
    private static final class Conn {
        final CreditAllotment.Share share = new CreditAllotment.Share();
        /** Messages the consumer still wants. */
        long demand;
        /** Messages received and not released, in arrival order. */
        int holding;
        long received;
    }

    private final class Model {
        final CreditAllotment a;
        final List<Conn> conns = new ArrayList<>();
        final int cap;

        Model(int depth, int cap, int n) {
            this.a = new CreditAllotment(depth, cap);
            this.cap = cap;
            for (int i = 0; i < n; i++) {
                conns.add(new Conn());
            }
        }

        /** ReceiveQueue.post through SharedReceiveMember.post. */
        void post(Conn c) {
            long uncovered = c.demand - c.share.granted();
            int n = (int) Math.max(0, Math.min(uncovered, a.available(c.share)));
            if (n > 0) {
                a.grant(c.share, n);
            }
            if (uncovered - n > 0) {
                a.await(c.share);
                refill();
            }
        }

        boolean refilling;

        void refill() {
            if (refilling) {
                return;
            }
            refilling = true;
            a.reposted(a.free());
            int turns = a.waiting();
            while (turns-- > 0 && a.unallotted() > 0) {
                CreditAllotment.Share s = a.nextWaiter();
                post(conns.stream().filter(c -> c.share == s).findFirst().orElseThrow());
                a.endTurn();
            }
            refilling = false;
        }

        /** The peer sends one message on a credit. */
        void send(Conn c) {
            assertTrue(a.posted() > 0, "a credit without a posted receive: RNR");
            assertTrue(a.consumed(c.share), "consumed without a credit");
            c.demand--;
            c.holding++;
            c.received++;
        }

        void release(Conn c, boolean repostNow) {
            a.released(c.share);
            c.holding--;
            if (repostNow || a.hasWaiters()) {
                refill();
            }
            post(c);
        }

        void check() {
            a.check();
            long granted = 0;
            for (Conn c : conns) {
                assertTrue(c.share.granted() + c.share.held() <= cap, "a connection above its cap");
                assertEquals(c.holding, c.share.held());
                granted += c.share.granted();
            }
            assertEquals(a.allotted(), granted);
            assertTrue(a.allotted() <= a.posted(), "credits beyond the posted receives: " + a);
        }
    }

    @Property(tries = 300)
    void noRnrNoStarvationBoundedMemory(@ForAll @IntRange(min = 1, max = 64) int depth,
            @ForAll @IntRange(min = 1, max = 16) int cap, @ForAll @IntRange(min = 1, max = 40) int connections,
            @ForAll long seed) {
        Random r = new Random(seed);
        Model m = new Model(depth, cap, connections);
        m.refill();
        long wanted = 0;
        for (int step = 0; step < 2_000; step++) {
            Conn c = m.conns.get(r.nextInt(connections));
            switch (r.nextInt(4)) {
                case 0 -> {
                    int k = 1 + r.nextInt(8);
                    c.demand += k;
                    wanted += k;
                    m.post(c);
                }
                case 1 -> {
                    if (c.share.granted() > 0) {
                        m.send(c);
                    }
                }
                case 2 -> {
                    if (c.holding > 0) {
                        m.release(c, r.nextInt(4) == 0);
                    }
                }
                default -> {
                    if (r.nextInt(8) == 0) {
                        m.refill();
                    }
                }
            }
            m.check();
        }
        // Consumers now keep up: every peer sends on each credit, every message is released at once.
        for (Conn c : m.conns) {
            while (c.holding > 0) {
                m.release(c, false);
            }
        }
        m.refill();
        long rounds = 0;
        boolean progress = true;
        while (progress) {
            progress = false;
            for (Conn c : m.conns) {
                while (c.share.granted() > 0) {
                    m.send(c);
                    m.release(c, false);
                    progress = true;
                }
            }
            m.refill();
            m.check();
            assertTrue(++rounds < 100_000, "no progress");
        }
        long received = 0;
        for (Conn c : m.conns) {
            assertEquals(0, c.demand, "a connection starved: " + m.a);
            received += c.received;
        }
        assertEquals(wanted, received);
        assertEquals(depth, m.a.posted() + m.a.free());
    }

    @Property(tries = 200)
    void aSlowConsumerHoldsNoMoreThanItsShare(@ForAll @IntRange(min = 4, max = 64) int depth,
            @ForAll @IntRange(min = 1, max = 16) int cap, @ForAll @IntRange(min = 2, max = 20) int connections) {
        Model m = new Model(depth, cap, connections);
        m.refill();
        Conn slow = m.conns.get(0);
        // The slow consumer asks for a lot and never releases.
        slow.demand = 1_000;
        m.post(slow);
        for (int i = 0; i < 1_000 && slow.share.granted() > 0; i++) {
            m.send(slow);
            m.post(slow);
        }
        assertTrue(slow.holding <= cap, "held " + slow.holding + " > cap " + cap);
        // The others still get their messages through, one share after another.
        for (int round = 0; round < 50; round++) {
            for (Conn c : m.conns.subList(1, connections)) {
                c.demand += 2;
                m.post(c);
                while (c.share.granted() > 0) {
                    m.send(c);
                    m.release(c, true);
                }
                m.check();
            }
        }
        for (Conn c : m.conns.subList(1, connections)) {
            assertEquals(0, c.demand, "a fast consumer starved behind the slow one: " + m.a);
        }
    }

    /**
     * Peers that stop sending keep the credits they were lent (a credit cannot be taken back), and their
     * consumers keep asking for more: as long as at most half the depth of connections share the SRQ, the
     * receives they sit on beyond one each still leave every other connection a credit, so the connections
     * whose peers go on sending get all their messages through. (Before extras were bounded, the first
     * connections took big shares while few were active, went idle, and the last ones got no credit at all.)
     */
    @Property(tries = 300)
    void peersSittingOnTheirCreditsStarveNobody(@ForAll @IntRange(min = 2, max = 64) int depth,
            @ForAll @IntRange(min = 1, max = 16) int cap, @ForAll @IntRange(min = 2, max = 32) int connections,
            @ForAll long seed) {
        int n = Math.min(connections, Math.max(1, depth / 2));
        Random r = new Random(seed);
        Model m = new Model(depth, cap, n);
        m.refill();
        int idle = 1 + r.nextInt(n);
        if (idle == n) {
            idle = n - 1;
        }
        // Connections arrive one after another and exchange a little; the first `idle` then stop sending and
        // keep whatever credits they were lent, while their consumers still want more (and may keep messages).
        for (int i = 0; i < n; i++) {
            Conn c = m.conns.get(i);
            c.demand += 1_000;
            m.post(c);
            for (int k = r.nextInt(4); k > 0 && c.share.granted() > 0; k--) {
                m.send(c);
                if (r.nextBoolean()) {
                    m.release(c, true);
                }
            }
            m.check();
        }
        List<Conn> active = m.conns.subList(idle, n);
        long[] target = new long[n];
        for (Conn c : active) {
            target[m.conns.indexOf(c)] = c.received + 20;
        }
        long rounds = 0;
        boolean done = false;
        while (!done) {
            done = true;
            for (Conn c : active) {
                while (c.holding > 0) {
                    m.release(c, false);
                }
                while (c.share.granted() > 0) {
                    m.send(c);
                    m.release(c, false);
                }
                m.refill();
                m.post(c);
                m.check();
                done &= c.received >= target[m.conns.indexOf(c)];
            }
            assertTrue(++rounds < 10_000, "an active connection starved behind " + idle + " idle ones: " + m.a);
        }
    }
}
