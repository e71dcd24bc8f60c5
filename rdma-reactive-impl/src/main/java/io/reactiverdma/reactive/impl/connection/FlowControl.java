package io.reactiverdma.reactive.impl.connection;

/**
 * The flow-control arithmetic of one connection, apart from the verbs that carry it out, so that it can be
 * reasoned about and tested on its own. Not thread-safe: only the connection's poller thread calls it.
 *
 * <h2>Send side</h2> {@code sendDepth} send-queue slots for user work (the credit update has its own extra
 * slot, outside this count). With credits, a message that consumes one of the peer's receives (SEND,
 * SEND_WITH_IMM, WRITE_WITH_IMM) may be posted only while {@code peerPostedTotal - sentMessages > 0}, where
 * {@code peerPostedTotal} is the running total of receives the peer has posted, as it last wrote it into
 * this side's credit word. The peer posts the receives before it writes the total, so a message sent under
 * this rule always finds a receive: no RNR.
 *
 * <h2>Receive side</h2> With credits, receives are posted only for demand that no posted receive or
 * undelivered message covers yet, and only into free buffers. Without credits (a plain peer, or credits off on
 * either side) the peer cannot see what was posted and sends when it likes, so every free buffer is kept
 * posted, a window ahead of demand bounded by the receive queue depth: the peer meets receiver-not-ready only
 * once the application holds every buffer (undelivered or unreleased), and demand still paces delivery. The running total is advertised to the peer when a quarter of the
 * receive queue is unadvertised, or at once when the peer may be short (it has fewer than that quarter of
 * advertised receives left, as far as this side has seen arrivals), one update in flight at a time: a peer
 * waiting for credits is always told about the next receive posted for it, so the exchange cannot stall.
 */
final class FlowControl {
    /** Why the head of the send queue cannot be posted now. */
    enum Blocked { NO, SLOT, CREDIT }

    private final int sendDepth;
    private final int receiveDepth;
    private final long advertiseThreshold;
    private boolean credits;
    /** {@link #useCredits} was called: the peer's offer (or its absence) is known. */
    private boolean creditsDecided;

    private int sendSlotsFree;
    private long sentMessages;

    private long demand;
    private int postedReceives;
    private long postedTotal;
    private long receivedTotal;
    private long advertised;
    private boolean advertisementInFlight;

    FlowControl(int sendDepth, int receiveDepth) {
        if (sendDepth < 1 || receiveDepth < 1) {
            throw new IllegalArgumentException("queue depths must be positive: send " + sendDepth + ", receive "
                    + receiveDepth);
        }
        this.sendDepth = sendDepth;
        this.receiveDepth = receiveDepth;
        this.sendSlotsFree = sendDepth;
        this.advertiseThreshold = Math.max(1, receiveDepth / 4);
    }

    /** Whether credits were agreed with the peer (set once, before the connection is established). */
    void useCredits(boolean agreed) {
        this.credits = agreed;
        this.creditsDecided = true;
    }

    /** Credits are known not to be used: receives are posted ahead of demand (see the class comment). */
    boolean receivesAheadOfDemand() {
        return creditsDecided && !credits;
    }

    boolean credits() {
        return credits;
    }

    // ------------------------------------------------------------------------------------------ send
    /** Messages this side may still send: {@code peerPostedTotal - sent} (meaningful with credits only). */
    long creditsLeft(long peerPostedTotal) {
        return peerPostedTotal - sentMessages;
    }

    /** What keeps an operation from being posted now, given the peer's latest advertised total. */
    Blocked blocked(boolean consumesPeerReceive, long peerPostedTotal) {
        if (sendSlotsFree == 0) {
            return Blocked.SLOT;
        }
        if (consumesPeerReceive && credits && creditsLeft(peerPostedTotal) <= 0) {
            return Blocked.CREDIT;
        }
        return Blocked.NO;
    }

    /** An operation was posted: it takes a slot, and a message takes a credit. */
    void posted(boolean consumesPeerReceive) {
        if (sendSlotsFree == 0) {
            throw new IllegalStateException("posted with no send-queue slot free");
        }
        sendSlotsFree--;
        if (consumesPeerReceive) {
            sentMessages++;
        }
    }

    /** A user operation completed (or was flushed): its slot is free. */
    /** A request taken with {@link #posted} was refused by the device: its slot (and credit) come back. */
    void refused(boolean consumesPeerReceive) {
        sendSlotsFree++;
        if (consumesPeerReceive) {
            sentMessages--;
        }
    }

    void sendCompleted() {
        if (sendSlotsFree == sendDepth) {
            throw new IllegalStateException("more send completions than posts");
        }
        sendSlotsFree++;
    }

    int sendSlotsFree() {
        return sendSlotsFree;
    }

    long sentMessages() {
        return sentMessages;
    }

    // --------------------------------------------------------------------------------------- receive
    /** The subscriber asked for {@code n} more messages (saturating at Long.MAX_VALUE). */
    void request(long n) {
        demand = demand + n < 0 ? Long.MAX_VALUE : demand + n;
    }

    /** The subscriber went away: no more receives are posted for it. */
    void cancelDemand() {
        demand = 0;
    }

    long demand() {
        return demand;
    }

    /** A message was handed to the subscriber. */
    void delivered() {
        if (demand <= 0) {
            throw new IllegalStateException("delivered without demand");
        }
        demand--;
    }

    /**
     * How many receives to post now: the uncovered demand, bounded by the free buffers; without credits every
     * free buffer (the window ahead of demand).
     */
    int receivesToPost(int freeBuffers, int undelivered) {
        if (receivesAheadOfDemand()) {
            return Math.max(0, freeBuffers);
        }
        long uncovered = demand - postedReceives - undelivered;
        return (int) Math.max(0, Math.min(uncovered, freeBuffers));
    }

    void receivesPosted(int n) {
        postedReceives += n;
        postedTotal += n;
    }

    /** A posted receive completed with a message. */
    void received() {
        postedReceives--;
        receivedTotal++;
    }

    /** A posted receive was flushed (the connection is closing). */
    void receiveFlushed() {
        postedReceives--;
    }

    int postedReceives() {
        return postedReceives;
    }

    long postedTotal() {
        return postedTotal;
    }

    // --------------------------------------------------------------------------------- advertisement
    /** Whether to write the running total to the peer now (credits agreed, none in flight, worth it). */
    boolean shouldAdvertise() {
        if (!credits || advertisementInFlight) {
            return false;
        }
        long unadvertised = postedTotal - advertised;
        if (unadvertised <= 0) {
            return false;
        }
        boolean peerMayBeShort = advertised - receivedTotal < advertiseThreshold;
        return unadvertised >= advertiseThreshold || peerMayBeShort;
    }

    /** The update was posted: returns the total it carries. */
    long advertising() {
        advertisementInFlight = true;
        advertised = postedTotal;
        return advertised;
    }

    /** The update completed (or was flushed): another may be sent. */
    void advertisementCompleted() {
        advertisementInFlight = false;
    }

    long advertised() {
        return advertised;
    }

    int receiveDepth() {
        return receiveDepth;
    }
}
