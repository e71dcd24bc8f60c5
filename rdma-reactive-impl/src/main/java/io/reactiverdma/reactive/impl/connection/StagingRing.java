package io.reactiverdma.reactive.impl.connection;

import io.reactiverdma.reactive.impl.device.BufferPool;
import io.reactiverdma.reactive.impl.device.EngineBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * Where a {@link StreamingSend} stages its messages: a ring of registered bytes (one pooled buffer) in which
 * each message takes its own length, rounded up to {@value #ALIGN} bytes, so that small messages to a peer
 * with large receive buffers do not each hold a peer-sized slot. Entries are freed in post order (a send
 * queue completes in order), which keeps the ring contiguous: a message that would run past the end starts
 * again at offset 0, and the bytes skipped are freed with it.
 *
 * <p>How many messages the stream may ask upstream for ({@link #affordable}) is estimated from the messages
 * it sent lately (the largest of the last two {@code entries}-long periods, at least a fair share of the ring):
 * small messages get the send queue's depth, messages of the peer's largest size as many as fit. Upstream's
 * sizes are only known once it emits, so a message that does not fit the free bytes when it comes (it was
 * larger than the estimate) is copied into a buffer of its own from the pool (a <em>spill</em>), posted in its
 * turn and given back at its completion; the caller's buffer is free when {@code onNext} returns either way.
 * Spills happen only when the sizes grow past the estimate, which then follows them: a stream of steady sizes
 * allocates nothing per message. One message up to the ring's size always fits an empty ring.
 *
 * <p>Threads: {@link #stage} runs on upstream's thread (one at a time, Reactive Streams §1.3); the rest on
 * the poller thread. An entry's fields are written by the producer before the stream publishes it (a release
 * store of its produced count) and rewritten only after the poller finished with it (upstream may only emit
 * what the poller requested after the entry's completion); the ring's free position is a release store by
 * the poller, read with acquire by the producer.
 */
final class StagingRing {
    /** Each message's bytes start on a cache line: the producer's next copy shares no line with a posted one. */
    static final int ALIGN = 64;
    private static final VarHandle FREED;

    static {
        try {
            FREED = MethodHandles.lookup().findVarHandle(StagingRing.class, "freed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final BufferPool pool;
    private final EngineBuffer area;
    private final int capacity;
    private final int entries;
    /**
     * Entry {@code seq} lives in slot {@code seq & slotMask}: the slot arrays have the power of two at or above
     * {@code entries} (at most {@code entries} are live at once), so no division is made per message.
     */
    private final int slotMask;
    private final int[] lengths;
    /** Where each entry's bytes start in the ring (the padding skipped). */
    private final int[] offsets;
    /**
     * The ring position (bytes ever taken, padding included) at which each entry's bytes end; its bytes start
     * its aligned length before (the padding, if any, comes first).
     */
    private final long[] ends;
    /**
     * An entry's own buffer when it did not fit the ring, else null; the array itself only once a message
     * did not fit (written by the producer, read by the poller after the entry is published).
     */
    private EngineBuffer[] spills;
    /** Bytes ever taken from the ring (producer writes; the poller reads it to estimate what is free). */
    private volatile long taken;
    /** Bytes ever given back (poller writes with release; the producer reads with acquire). */
    private volatile long freed;
    /** {@code taken} modulo the capacity, kept as it grows (producer only): no division per message. */
    private int takenAt;
    // ---- poller thread only: the size estimate
    private final int fairShare;
    private int largestNow;
    private int largestBefore;
    private int countedNow;

    /**
     * Takes the ring from {@code pool}: {@code entries} messages of up to {@code largest} bytes each, in at
     * most one pooled buffer (at least one message of {@code largest} bytes, which must fit one).
     */
    static StagingRing allocate(BufferPool pool, int entries, int largest) {
        long wanted = (long) entries * align(largest);
        int capacity = (int) Math.max(align(largest), Math.min(wanted, pool.maxAllocationSize()));
        EngineBuffer area = pool.allocatePooled(capacity);
        area.retain();
        return new StagingRing(pool, area, capacity, entries);
    }

    private StagingRing(BufferPool pool, EngineBuffer area, int capacity, int entries) {
        this.pool = pool;
        this.area = area;
        this.capacity = capacity;
        this.entries = entries;
        int slots = entries <= 1 ? 1 : Integer.highestOneBit(entries - 1) << 1;
        this.slotMask = slots - 1;
        this.lengths = new int[slots];
        this.offsets = new int[slots];
        this.ends = new long[slots];
        this.fairShare = Math.max(ALIGN, capacity / entries / ALIGN * ALIGN);
    }

    /** The largest message the ring takes (the rest is too large for the stream). */
    int capacity() {
        return capacity;
    }

    // ------------------------------------------------------------------------------ upstream's thread
    /**
     * Copies {@code message} (its remaining bytes, {@code n} of them; no position changes) as entry
     * {@code seq}: into the ring when its free bytes allow, else into a spill buffer from the pool.
     */
    void stage(long seq, ByteBuffer message, int n) {
        int e = slot(seq);
        long start = taken;
        int need = align(n);
        int at = takenAt;
        long end = start;
        if (need > 0) {
            long pad = at + need > capacity ? capacity - at : 0;
            end = start + pad + need;
            if (end - (long) FREED.getAcquire(this) > capacity) {
                spill(e, message, n);
                ends[e] = start;
                lengths[e] = n;
                return;
            }
            at = pad > 0 ? 0 : at;
            area.memory().put(area.offset() + at, message, message.position(), n);
            offsets[e] = at;
            takenAt = at + need == capacity ? 0 : at + need;
        }
        if (spills != null) {
            spills[e] = null;
        }
        ends[e] = end;
        lengths[e] = n;
        taken = end;
    }

    private void spill(int e, ByteBuffer message, int n) {
        EngineBuffer b = pool.allocatePooled(n);
        b.retain();
        b.memory().put(b.offset(), message, message.position(), n);
        if (spills == null) {
            spills = new EngineBuffer[lengths.length];
        }
        spills[e] = b;
    }

    // ---------------------------------------------------------------------------------- poller thread
    int length(long seq) {
        return lengths[slot(seq)];
    }

    long address(long seq) {
        int e = slot(seq);
        EngineBuffer s = spill(e);
        return s != null ? s.address() : area.address() + offsets[e];
    }

    int lkey(long seq) {
        EngineBuffer s = spill(slot(seq));
        return s != null ? s.lkey() : area.lkey();
    }

    private EngineBuffer spill(int e) {
        EngineBuffer[] s = spills;
        return s == null ? null : s[e];
    }

    /** Entry {@code seq} is being posted: its size counts towards the estimate. */
    void posting(long seq) {
        int n = lengths[slot(seq)];
        if (n > largestNow) {
            largestNow = n;
        }
        if (++countedNow == entries) {
            largestBefore = largestNow;
            largestNow = 0;
            countedNow = 0;
        }
    }

    /** Entry {@code seq}, the oldest taken, is done with (completed, or never posted): its bytes come free. */
    void free(long seq) {
        int e = slot(seq);
        EngineBuffer s = spill(e);
        if (s != null) {
            spills[e] = null;
            s.unretain();
            s.release();
        }
        FREED.setRelease(this, ends[e]);
    }

    /**
     * How many more messages upstream may be asked for now: {@code unstaged} were asked for and not emitted
     * yet, {@code slots} entries are free. At least one when {@code idle} (nothing staged or asked for: the
     * ring is empty, so any message that fits it fits).
     */
    long affordable(long unstaged, long slots, boolean idle) {
        long estimate = estimate();
        long free = capacity - (taken - (long) FREED.getAcquire(this)) - unstaged * estimate;
        long n = Math.min(slots, Math.max(0, free / estimate));
        return idle ? Math.max(n, Math.min(1, slots)) : n;
    }

    /** How many messages of the current estimate the ring holds (at most the entries). */
    long windowNow() {
        return Math.min(entries, capacity / estimate());
    }

    private long estimate() {
        return Math.max(fairShare, align(Math.max(largestNow, largestBefore)));
    }

    /** Gives the ring back to the pool (poller; nothing posted from it outstanding, no producer inside). */
    void release(long firstUnfreed, long produced) {
        for (long s = firstUnfreed; s < produced; s++) {
            free(s); // staged, never posted: their spills go back too
        }
        area.unretain();
        area.release();
    }

    private int slot(long seq) {
        return (int) seq & slotMask;
    }

    private static int align(int n) {
        return (n + ALIGN - 1) & -ALIGN;
    }
}
