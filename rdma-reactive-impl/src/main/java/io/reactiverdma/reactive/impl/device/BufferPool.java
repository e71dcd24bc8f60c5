package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.metrics.EngineMetrics;
import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Registered memory of one protection domain. Pooled buffers come from slabs registered once (local access
 * only) and carved into power-of-two chunks, one size class per slab; a released chunk goes back to its slab.
 * A slab none of whose chunks is held is idle; idle slabs are deregistered and freed once idle for
 * {@link PoolRelease#idleTime()}, except the last {@link PoolRelease#keepIdleBytes()} of them, so the pinned
 * memory follows the load (docs/memory-and-buffers.md). Allocation fills partly used slabs first and takes the
 * idle slab that went idle last, so the oldest idle ones age out. User registrations are separate memory
 * regions with exactly the remote access asked for ({@link UserRegions}); what is registered is counted in
 * {@link PoolMetrics}.
 * <p>
 * Threading as before: any thread allocates, pollers recycle, all under this monitor; registration and
 * deregistration (slow: they pin and unpin every page) happen outside it. The release runs on the timer given
 * (the engine's), only when something is idle: nothing is scheduled on a busy or empty pool.
 */
public final class BufferPool implements RdmaMemory {
    /** Registers memory: the PD in production, a fake in host tests. */
    interface Registrar {
        Registration register(ByteBuffer directBuffer, Set<RemoteAccess> remoteAccess);
    }

    /**
     * Gives a released slab's pages back to the system ({@code madvise(MADV_DONTNEED)} in production): the
     * direct buffer itself is freed only when the GC collects it, which may be never on a quiet heap.
     */
    interface Pages {
        void discard(ByteBuffer memory);
    }

    /** Runs a task later (the engine's timer; a manual one in host tests). */
    interface Timer {
        void schedule(Runnable task, long delayNanos);
    }

    static final int MIN_CHUNK = 64;
    /** Slabs one timer run deregisters at most (then it comes back at once): the timer has other work. */
    static final int MAX_RELEASED_PER_RUN = 16;

    private final Registrar registrar;
    private final int slabSize;
    private final String description;
    private final PoolRelease release;
    private final LongSupplier clock;
    private final Timer timer;
    /** Memory of released slabs, pages discarded: the next slabs reuse it (no GC needed to free it). */
    private final ArrayDeque<ByteBuffer> discarded = new ArrayDeque<>();
    /** Per size class (index: log2(chunk size)): slabs with some chunks held and some free. Guarded by this. */
    private final Slab.List[] partial = new Slab.List[32];
    /** Per size class: slabs with no chunk held, oldest idle first. Guarded by this. */
    private final Slab.List[] idle = new Slab.List[32];
    /** Every registered slab (what close deregisters). */
    private final List<Slab> slabs = new ArrayList<>();
    private final PoolMetrics metrics = new PoolMetrics();
    private final UserRegions userRegions;
    private final IdleSlabRelease idleRelease;
    /**
     * Held (before this monitor) by a release run from choosing its slabs to deregistering them, and by close:
     * so close never returns, and the protection domain is never freed, while a release still deregisters.
     */
    private final Object deregistering = new Object();
    private long pooledInUse;
    private long idleBytes;
    private boolean releaseScheduled;
    private boolean closed;

    /** A pool that never gives slabs back (host tests of other parts). */
    public BufferPool(Registrar registrar, int slabSize, String description) {
        this(registrar, slabSize, description, new PoolRelease(Duration.ZERO, Long.MAX_VALUE), System::nanoTime,
                (task, delay) -> { }, memory -> { });
    }

    BufferPool(Registrar registrar, int slabSize, String description, PoolRelease release, LongSupplier clock,
            Timer timer, Pages pages) {
        if (Integer.bitCount(slabSize) != 1 || slabSize < MIN_CHUNK) {
            throw new IllegalArgumentException("slabSize must be a power of two >= " + MIN_CHUNK + ", got " + slabSize);
        }
        this.registrar = Objects.requireNonNull(registrar, "registrar");
        this.slabSize = slabSize;
        this.description = description;
        this.release = Objects.requireNonNull(release, "release");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.timer = Objects.requireNonNull(timer, "timer");
        for (int i = 0; i < 32; i++) {
            partial[i] = new Slab.List();
            idle[i] = new Slab.List();
        }
        this.userRegions = new UserRegions(this, registrar, metrics);
        this.idleRelease = new IdleSlabRelease(this, Objects.requireNonNull(pages, "pages"), timer, metrics);
    }

    @Override
    public int maxAllocationSize() {
        return slabSize;
    }

    @Override
    public RegisteredBuffer allocate(int size) {
        return allocatePooled(size);
    }

    public PooledBuffer allocatePooled(int size) {
        if (size < 1 || size > slabSize) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "a pooled buffer is 1.." + slabSize + " bytes, asked for " + size
                            + " (register larger memory with register(..) or allocateRegistered(..))");
        }
        int chunkSize = Math.max(MIN_CHUNK, Integer.highestOneBit(size - 1) << 1);
        if (size == 1) {
            chunkSize = MIN_CHUNK;
        }
        int sizeClass = Integer.numberOfTrailingZeros(chunkSize);
        synchronized (this) {
            ensureOpen();
            Slab s = partial[sizeClass].head;
            if (s == null) {
                s = idle[sizeClass].tail; // the one that went idle last: the older ones may age out
                if (s != null) {
                    idle[sizeClass].remove(s);
                    idleBytes -= s.bytes();
                    partial[sizeClass].addLast(s);
                }
            }
            if (s != null) {
                return handOut(s, sizeClass, size);
            }
        }
        // No free chunk: register a new slab outside the monitor (ibv_reg_mr pins every page and is slow;
        // pollers recycling buffers must not wait for it).
        return carveSlab(chunkSize, size);
    }

    /** Takes a chunk of {@code s}, which is on its class' partial list. */
    private PooledBuffer handOut(Slab s, int sizeClass, int length) {
        Chunk c = s.take();
        if (s.full()) {
            partial[sizeClass].remove(s);
        }
        pooledInUse += s.chunkSize;
        return new PooledBuffer(this, c, length);
    }

    private PooledBuffer carveSlab(int chunkSize, int length) {
        ByteBuffer memory;
        synchronized (this) {
            memory = discarded.poll();
        }
        if (memory == null) {
            memory = ByteBuffer.allocateDirect(slabSize).order(ByteOrder.nativeOrder());
        }
        Registration r;
        try {
            r = registrar.register(memory, EnumSet.noneOf(RemoteAccess.class));
        } catch (RuntimeException e) {
            synchronized (this) {
                discarded.push(memory);
            }
            throw new RdmaException("cannot register a " + slabSize + "-byte slab for the buffer pool of "
                    + description + ": " + e.getMessage(), e);
        }
        synchronized (this) {
            if (closed) {
                r.deregister();
                ensureOpen();
            }
            Slab s = new Slab(memory, r, chunkSize);
            slabs.add(s);
            metrics.registered(slabSize);
            int sizeClass = Integer.numberOfTrailingZeros(chunkSize);
            partial[sizeClass].addLast(s);
            return handOut(s, sizeClass, length);
        }
    }

    void recycle(Chunk c) {
        boolean schedule = false;
        synchronized (this) {
            Slab s = c.slab();
            pooledInUse -= s.chunkSize;
            if (closed) {
                return;
            }
            int sizeClass = Integer.numberOfTrailingZeros(s.chunkSize);
            boolean wasFull = s.full();
            s.give(c);
            if (s.idle()) {
                if (!wasFull) {
                    partial[sizeClass].remove(s);
                }
                s.idleSince = clock.getAsLong();
                idle[sizeClass].addLast(s);
                idleBytes += s.bytes();
                schedule = idleBytes > release.keepIdleBytes() && !releaseScheduled;
                releaseScheduled |= schedule;
            } else if (wasFull) {
                partial[sizeClass].addLast(s);
            }
        }
        if (schedule) {
            timer.schedule(this::releaseIdle, release.idleTime().toNanos());
        }
    }

    /**
     * The timer's task: deregisters the slabs idle for the idle time, oldest first, while more than
     * keepIdleBytes are idle, and comes back when the next one will have been idle long enough.
     */
    void releaseIdle() {
        synchronized (deregistering) {
            idleRelease.run();
        }
    }

    /**
     * Takes the slabs to release now out of the pool into {@code toFree}; returns in how many nanoseconds the
     * release should run again, or -1 when nothing is left to wait for (or the pool is closed).
     */
    synchronized long takeExpiredSlabs(List<Slab> toFree) {
        releaseScheduled = false;
        if (closed) {
            return -1;
        }
        long now = clock.getAsLong();
        long idleNanos = release.idleTime().toNanos();
        while (idleBytes > release.keepIdleBytes()) {
            Slab oldest = null;
            for (Slab.List l : idle) {
                if (l.head != null && (oldest == null || l.head.idleSince - oldest.idleSince < 0)) {
                    oldest = l.head;
                }
            }
            long idleFor = now - oldest.idleSince;
            if (toFree.size() == MAX_RELEASED_PER_RUN || idleFor < idleNanos) {
                releaseScheduled = true;
                return toFree.size() == MAX_RELEASED_PER_RUN ? 0 : idleNanos - idleFor;
            }
            oldest.list.remove(oldest);
            idleBytes -= oldest.bytes();
            slabs.remove(oldest);
            toFree.add(oldest);
        }
        return -1;
    }

    /** A slab whose deregistration failed stays (pinned) until close. */
    synchronized void keepSlab(Slab s) {
        slabs.add(s);
    }

    /** A released slab's memory (pages given back) for the next slab. */
    synchronized void reuseMemory(ByteBuffer memory) {
        discarded.push(memory);
    }

    /**
     * Reports the registered bytes and released slabs to {@code metrics}' recorder from now on (once per
     * distinct recorder, at most {@value PoolMetrics#MAX_RECORDERS}): the pool is the device's, shared by
     * connections that may report to different recorders.
     */
    public void attachMetrics(EngineMetrics metrics) {
        this.metrics.attach(metrics);
    }

    @Override
    public RegisteredBuffer register(ByteBuffer directBuffer, RemoteAccess... remoteAccess) {
        return userRegions.register(directBuffer, remoteAccess);
    }

    @Override
    public RegisteredBuffer allocateRegistered(int size, RemoteAccess... remoteAccess) {
        if (size < 1) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "size must be >= 1, got " + size);
        }
        return register(ByteBuffer.allocateDirect(size), remoteAccess);
    }

    void deregistered(UserRegistration u) {
        userRegions.deregistered(u);
    }

    String description() {
        return description;
    }

    /** Closed is reported as for a closed connection: one type for "closed". */
    ConnectionClosedException closedError() {
        return new ConnectionClosedException("the buffer pool of " + description + " is closed");
    }

    private void ensureOpen() {
        if (closed) {
            throw closedError();
        }
    }

    /** Bytes of pooled chunks handed out and not yet recycled. */
    public synchronized long pooledBytesInUse() {
        return pooledInUse;
    }

    synchronized int slabCount() {
        return slabs.size();
    }

    /** Bytes registered now: pooled slabs and user registrations (pinned memory). */
    public long registeredBytes() {
        return metrics.registeredBytes();
    }

    /** Bytes of idle slabs (no chunk held) still registered. */
    public synchronized long idleBytes() {
        return idleBytes;
    }

    /** Idle slabs deregistered so far. */
    public long slabsReleased() {
        return metrics.slabsReleased();
    }

    /** Deregisters every slab and user registration. Buffers still held become unusable. */
    public void close() {
        synchronized (deregistering) {
            closeRegistrations();
        }
    }

    private void closeRegistrations() {
        List<Registration> toFree = new ArrayList<>();
        List<Integer> sizes = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            for (Slab s : slabs) {
                toFree.add(s.registration);
                sizes.add(s.bytes());
            }
            for (UserRegistration u : userRegions.close()) {
                toFree.add(u.registration);
                sizes.add(u.length());
            }
            slabs.clear();
            for (int i = 0; i < 32; i++) {
                partial[i] = new Slab.List();
                idle[i] = new Slab.List();
            }
            idleBytes = 0;
        }
        RuntimeException failure = null;
        long freed = 0;
        for (int i = 0; i < toFree.size(); i++) {
            try {
                toFree.get(i).deregister();
                freed += sizes.get(i);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        metrics.registered(-freed);
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "BufferPool of " + description;
    }

    /** A piece of a slab. */
    record Chunk(Slab slab, int offset) {
    }
}
