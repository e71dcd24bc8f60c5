package io.reactiverdma.reactive.impl.connection;

import java.util.ArrayDeque;

/**
 * How the receives posted on one shared receive queue are allotted as credits to the connections using it,
 * apart from the verbs that carry it out, so that it can be reasoned about and tested on its own. Not
 * thread-safe: only the SRQ's poller thread calls it.
 *
 * <p>Every buffer of the SRQ is in one of three places: posted on the SRQ, held by a connection (a message
 * received into it and not released yet), or free (released, waiting to be posted again). A connection's
 * credits ({@link Share#granted}) are receives promised to its peer and not consumed yet. The rules:
 * <ul>
 * <li><b>No RNR.</b> The credits of all connections together never exceed the receives posted
 *     ({@code allotted <= posted}): a credit is given only out of posted receives nobody was promised, and a
 *     message consumes a posted receive and its sender's credit together. So a peer that sends only with
 *     credits always finds a receive.</li>
 * <li><b>A share each.</b> A connection may have at most {@link #shareLimit} credits plus held messages:
 *     the SRQ's depth divided among the active connections (those with credits, held messages, or waiting)
 *     plus one, at least 1 and at most {@code cap} ({@code RECEIVE_QUEUE_DEPTH}). A slow consumer that keeps
 *     its messages holds at most its share, and the others go on with the rest.</li>
 * <li><b>In turn.</b> A connection that wants credits and gets none waits in a FIFO queue; while any
 *     wait, credits go to the queue's head first ({@link #nextWaiter}), so every waiter is served in turn as
 *     buffers come back.</li>
 * <li><b>A first credit for everyone.</b> Credits once advertised cannot be taken back (the peer may use them
 *     at any time, and only a message it sends consumes one), so credits lent to a peer that stops sending
 *     stay with it for as long as the connection is open. What a connection holds beyond its first credit
 *     (credits plus held messages, less one) is an <em>extra</em>, and all connections' extras together never
 *     exceed {@link #extrasBound} (the depth less {@link #firstsGuaranteed}, which is half the depth, at least
 *     1). So however many credits idle peers sit on, the receives they hold beyond one each leave enough for
 *     every other connection's first credit and hello, as long as at most {@link #firstsGuaranteed}
 *     connections (and hellos expected) share the SRQ. Beyond that a connection can wait for its first credit
 *     until a peer that holds one sends or its connection closes: each connection needs a receive of its own
 *     to be able to send at all, and a credit an idle peer holds is freed only by that peer.</li>
 * </ul>
 * When the share shrinks (more connections become active), a connection above it only gets no new credits
 * until it is below again.
 *
 * <p>Hellos (see {@code CreditWordHandshake}) are sent before any credit, so each needs a posted receive that
 * no credit stands for. At most {@link #helloBound} such receives are kept at a time (half the depth:
 * a quarter was too few for 1,000 honest clients connecting at once on rxe under emulation): a connection whose hello cannot be given one yet waits (before its accept), and the receives kept
 * for hellos never exceed the bound, so peers that never send their hello hold at most half of the SRQ,
 * and only for as long as the hello deadline of {@code SharedReceives} lets them.
 */
final class CreditAllotment {
    /** One connection's part of the SRQ. */
    static class Share {
        /** Credits allotted to this connection's peer and not consumed by a message yet. */
        int granted;
        /** Messages received into SRQ buffers and not released yet. */
        int held;
        boolean waiting;
        /** The connection is gone: it gets no more credits; its held buffers still come back. */
        boolean left;

        int granted() {
            return granted;
        }

        int held() {
            return held;
        }
    }

    private final int depth;
    private final int cap;
    private int posted;
    private int free;
    private int held;
    private int allotted;
    /**
     * Hellos expected from peers that have not said them yet (see {@code CreditWordHandshake}): a hello is
     * sent before any credit, so it must find a posted receive that no credit stands for.
     */
    private int reservedForHellos;
    /**
     * Of those, the ones a posted receive is kept for (the peer was accepted and may send its hello); only
     * these are taken out of the credits, and there are at most {@link #helloBound}.
     */
    private int backedHellos;
    private final int helloBound;
    /** The most receives all connections may hold beyond their first credit: the depth less {@link #helloBound}. */
    private final int extrasBound;
    /** What all connections hold beyond their first credit: the sum of {@link #extra}. */
    private int extras;
    private int active;
    private final ArrayDeque<Share> waiters = new ArrayDeque<>();
    /** The waiter being served now: it may take credits ahead of the queue. */
    private Share turn;

    CreditAllotment(int depth, int cap) {
        if (depth < 1 || cap < 1) {
            throw new IllegalArgumentException("depth and cap must be positive: " + depth + ", " + cap);
        }
        this.depth = depth;
        this.cap = cap;
        this.free = depth;
        this.helloBound = Math.max(1, depth / 2);
        this.extrasBound = depth - helloBound;
    }

    /** Credits plus held messages beyond the first: what an idle peer could keep from the others. */
    private static int extra(Share s) {
        return Math.max(0, s.granted + s.held - 1);
    }

    private static boolean isActive(Share s) {
        return s.granted + s.held > 0 || s.waiting;
    }

    private void adjust(boolean wasActive, Share s) {
        boolean now = isActive(s);
        if (now != wasActive) {
            active += now ? 1 : -1;
        }
    }

    /**
     * The most credits plus held messages {@code s} may have now: the depth divided among the active
     * connections and one more, so that even a connection alone leaves room for the next one (with a depth
     * of 2 or more, one connection that never releases cannot take the whole SRQ).
     */
    int shareLimit(Share s) {
        int n = active + (isActive(s) ? 0 : 1) + 1;
        return Math.min(cap, Math.max(1, depth / n));
    }

    /** Credits {@code s} could be given now (0 while others wait before it). */
    int available(Share s) {
        if (s.left || (!waiters.isEmpty() && turn != s)) {
            return 0;
        }
        int firstAndExtras = (s.granted + s.held == 0 ? 1 : 0) + extrasBound - extras;
        return Math.max(0, Math.min(Math.min(shareLimit(s) - s.granted - s.held, firstAndExtras),
                posted - allotted - keptForHellos()));
    }

    /** Allots {@code n} credits to {@code s} (at most {@link #available}). */
    void grant(Share s, int n) {
        if (n < 0 || n > available(s)) {
            throw new IllegalStateException("granting " + n + " credits, " + available(s) + " available");
        }
        boolean was = isActive(s);
        int e = extra(s);
        s.granted += n;
        allotted += n;
        extras += extra(s) - e;
        adjust(was, s);
    }

    /** {@code s} wants credits it could not get: it waits its turn (once). */
    void await(Share s) {
        if (s.waiting || s.left) {
            return;
        }
        boolean was = isActive(s);
        s.waiting = true;
        waiters.add(s);
        adjust(was, s);
    }

    /** Whether a connection waits for credits. */
    boolean hasWaiters() {
        return !waiters.isEmpty();
    }

    /** Takes the longest waiter and gives it the turn (null: none waits). */
    Share nextWaiter() {
        Share s = waiters.poll();
        if (s != null) {
            boolean was = isActive(s);
            s.waiting = false;
            adjust(was, s);
        }
        turn = s;
        return s;
    }

    /** The waiter served last is done (it waits again at the back if it still wants credits). */
    void endTurn() {
        turn = null;
    }

    int waiting() {
        return waiters.size();
    }

    /**
     * A message for {@code s} consumed a posted receive; false when {@code s} had no credit for it (its peer
     * sent without one: the receive may have been promised to another connection).
     */
    boolean consumed(Share s) {
        boolean was = isActive(s);
        int e = extra(s);
        boolean hadCredit = s.granted > 0;
        if (hadCredit) {
            s.granted--;
            allotted--;
        }
        posted--;
        s.held++;
        held++;
        extras += extra(s) - e; // unchanged with a credit; a message without one (a plain peer) adds to it
        adjust(was, s);
        return hadCredit;
    }

    /**
     * A connection whose peer will send a hello joined: one posted receive is kept for it (no credit is
     * given out of it); {@link #backHello} says when a posted receive stands for it.
     */
    void reserveHello() {
        reservedForHellos++;
    }

    /**
     * Whether one more expected hello can have a posted receive kept for it now (then it counts as backed):
     * never more than {@link #helloBound} at a time.
     */
    boolean backHello() {
        if (backedHellos < reservedForHellos && backedHellos < helloBound && posted - allotted > backedHellos) {
            backedHellos++;
            return true;
        }
        return false;
    }

    /** The hello arrived (it consumed a kept receive; its buffer is free at once), or will not come. */
    void helloDone(boolean backed, boolean arrived) {
        reservedForHellos--;
        if (backed) {
            backedHellos--;
        }
        if (arrived) {
            consumedByNobody();
        }
    }

    /** A receive was consumed by a queue pair no connection owns any more: its buffer is free at once. */
    void consumedByNobody() {
        posted--;
        free++;
    }

    /** A message of {@code s} was released: its buffer is free (to be posted again). */
    void released(Share s) {
        if (s.held == 0) {
            throw new IllegalStateException("released more buffers than held");
        }
        boolean was = isActive(s);
        int e = extra(s);
        s.held--;
        held--;
        free++;
        extras += extra(s) - e;
        adjust(was, s);
    }

    /** {@code n} free buffers were posted on the SRQ. */
    void reposted(int n) {
        if (n < 0 || n > free) {
            throw new IllegalStateException("reposting " + n + " of " + free + " free buffers");
        }
        free -= n;
        posted += n;
    }

    /** {@code s}'s connection is gone: its credits return to the pool (its held buffers when released). */
    void leave(Share s) {
        boolean was = isActive(s);
        int e = extra(s);
        allotted -= s.granted;
        s.granted = 0;
        extras += extra(s) - e;
        if (s.waiting) {
            waiters.remove(s);
            s.waiting = false;
        }
        if (turn == s) {
            turn = null;
        }
        s.left = true;
        adjust(was, s);
    }

    int depth() {
        return depth;
    }

    int posted() {
        return posted;
    }

    int free() {
        return free;
    }

    int held() {
        return held;
    }

    int allotted() {
        return allotted;
    }

    /** Posted receives promised to nobody yet (and not kept for a hello). */
    int unallotted() {
        return posted - allotted - keptForHellos();
    }

    /**
     * Posted receives no credit may take: one for each expected hello, up to {@link #helloBound} (so that
     * hellos waiting for one are served by the next refill, before credits, however many connections
     * want credits meanwhile; and however many peers never send theirs, they hold no more than the bound).
     */
    private int keptForHellos() {
        return Math.min(reservedForHellos, helloBound);
    }

    /** The most posted receives kept for hellos at a time: half the depth, at least 1. */
    int helloBound() {
        return helloBound;
    }

    /** The most connections (and expected hellos) whose first credit idle peers can never keep back. */
    int firstsGuaranteed() {
        return helloBound;
    }

    int extras() {
        return extras;
    }

    int backedHellos() {
        return backedHellos;
    }

    int active() {
        return active;
    }

    /** Throws when the bookkeeping is inconsistent (for tests and assertions). */
    void check() {
        if (allotted + backedHellos > posted || backedHellos > helloBound || allotted < 0 || posted < 0
                || free < 0 || held < 0 || posted + free + held != depth || extras < 0) {
            throw new IllegalStateException("SRQ allotment inconsistent: " + this);
        }
    }

    @Override
    public String toString() {
        return "CreditAllotment{depth " + depth + ", posted " + posted + ", free " + free + ", held " + held
                + ", allotted " + allotted + ", hellos kept " + backedHellos + " of " + reservedForHellos
                + ", extras " + extras + " of " + extrasBound + ", active " + active + ", waiting " + waiters.size() + "}";
    }
}
