package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RdmaMemory;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.impl.device.EngineBuffer.Root;
import io.reactiverdma.reactive.impl.verbs.Registration;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Registered memory of one protection domain. Pooled buffers come from slabs registered once (local access
 * only) and carved into power-of-two chunks, one size class per slab; a released chunk goes back to its
 * class' free list, never to the OS until the pool closes. User registrations are separate memory
 * regions with exactly the remote access asked for.
 */
public final class BufferPool implements RdmaMemory {
    /** Registers memory: the PD in production, a fake in host tests. */
    interface Registrar {
        Registration register(ByteBuffer directBuffer, Set<RemoteAccess> remoteAccess);
    }

    static final int MIN_CHUNK = 64;

    private final Registrar registrar;
    private final int slabSize;
    private final String description;
    /** Free chunks per size class (index: log2(chunk size)). Guarded by this. */
    private final List<ArrayDeque<Chunk>> free = new ArrayList<>();
    private final List<Registration> slabs = new ArrayList<>();
    private final Set<UserRegistration> userRegistrations = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    private long pooledInUse;
    private boolean closed;

    public BufferPool(Registrar registrar, int slabSize, String description) {
        if (Integer.bitCount(slabSize) != 1 || slabSize < MIN_CHUNK) {
            throw new IllegalArgumentException("slabSize must be a power of two >= " + MIN_CHUNK + ", got " + slabSize);
        }
        this.registrar = Objects.requireNonNull(registrar, "registrar");
        this.slabSize = slabSize;
        this.description = description;
        for (int i = 0; i <= 31; i++) {
            free.add(new ArrayDeque<>());
        }
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
        while (true) {
            synchronized (this) {
                ensureOpen();
                ArrayDeque<Chunk> q = free.get(sizeClass);
                if (!q.isEmpty()) {
                    Chunk c = q.pop();
                    pooledInUse += chunkSize;
                    return new PooledBuffer(this, c, size);
                }
            }
            // No free chunk: register a new slab outside the monitor (ibv_reg_mr pins every page and is
            // slow; pollers recycling buffers must not wait for it), then try again.
            carveSlab(chunkSize);
        }
    }

    private void carveSlab(int chunkSize) {
        ByteBuffer slab = ByteBuffer.allocateDirect(slabSize).order(ByteOrder.nativeOrder());
        Registration r;
        try {
            r = registrar.register(slab, EnumSet.noneOf(RemoteAccess.class));
        } catch (RuntimeException e) {
            throw new RdmaException("cannot register a " + slabSize + "-byte slab for the buffer pool of "
                    + description + ": " + e.getMessage(), e);
        }
        synchronized (this) {
            if (closed) {
                r.deregister();
                ensureOpen();
            }
            slabs.add(r);
            ArrayDeque<Chunk> into = free.get(Integer.numberOfTrailingZeros(chunkSize));
            for (int off = 0; off < slabSize; off += chunkSize) {
                into.add(new Chunk(slab, r, off, chunkSize));
            }
        }
    }

    synchronized void recycle(Chunk c) {
        pooledInUse -= c.size;
        if (!closed) {
            free.get(Integer.numberOfTrailingZeros(c.size)).push(c);
        }
    }

    @Override
    public RegisteredBuffer register(ByteBuffer directBuffer, RemoteAccess... remoteAccess) {
        Objects.requireNonNull(directBuffer, "directBuffer");
        Objects.requireNonNull(remoteAccess, "remoteAccess");
        if (!directBuffer.isDirect()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "only a direct ByteBuffer can be registered (heap memory moves): use ByteBuffer.allocateDirect");
        }
        if (directBuffer.isReadOnly()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "a read-only buffer cannot be registered");
        }
        if (!directBuffer.hasRemaining()) {
            throw new InvalidRequestException(InvalidRequestException.Reason.ILLEGAL_ARGUMENT,
                    "the buffer has no bytes between its position and limit");
        }
        EnumSet<RemoteAccess> access = EnumSet.noneOf(RemoteAccess.class);
        for (RemoteAccess a : remoteAccess) {
            access.add(Objects.requireNonNull(a, "remoteAccess element"));
        }
        ByteBuffer view = directBuffer.slice().order(ByteOrder.nativeOrder());
        synchronized (this) {
            ensureOpen();
        }
        // Outside the monitor: ibv_reg_mr of a large region takes long, and pollers recycle under it.
        Registration r;
        try {
            r = registrar.register(view, access);
        } catch (RuntimeException e) {
            throw new RdmaException("cannot register " + view.capacity() + " bytes with " + access + " on "
                    + description + ": " + e.getMessage(), e);
        }
        UserRegistration u = new UserRegistration(this, view, r, Collections.unmodifiableSet(access));
        synchronized (this) {
            if (closed) {
                r.deregister(); // closed meanwhile: nothing may outlive the pool
                ensureOpen();
            }
            userRegistrations.add(u);
        }
        return u;
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
        synchronized (this) {
            if (!userRegistrations.remove(u)) {
                return;
            }
        }
        u.registration.deregister();
    }

    private void ensureOpen() {
        if (closed) {
            throw new InvalidRequestException(InvalidRequestException.Reason.CONNECTION_CLOSED,
                    "the buffer pool of " + description + " is closed");
        }
    }

    /** Bytes of pooled chunks handed out and not yet recycled. */
    public synchronized long pooledBytesInUse() {
        return pooledInUse;
    }

    synchronized int slabCount() {
        return slabs.size();
    }

    /** Deregisters every slab and user registration. Buffers still held become unusable. */
    public void close() {
        List<Registration> toFree;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            toFree = new ArrayList<>(slabs);
            for (UserRegistration u : userRegistrations) {
                toFree.add(u.registration);
            }
            slabs.clear();
            userRegistrations.clear();
            free.forEach(ArrayDeque::clear);
        }
        RuntimeException failure = null;
        for (Registration r : toFree) {
            try {
                r.deregister();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "BufferPool of " + description;
    }

    /** A piece of a slab. */
    record Chunk(ByteBuffer slab, Registration registration, int offset, int size) {
    }

    /** A chunk handed out. */
    static final class PooledBuffer extends Root {
        private final BufferPool pool;
        private final Chunk chunk;
        private final int length;

        PooledBuffer(BufferPool pool, Chunk chunk, int length) {
            super(Collections.emptySet());
            this.pool = pool;
            this.chunk = chunk;
            this.length = length;
        }

        @Override
        public ByteBuffer memory() {
            return chunk.slab;
        }

        @Override
        public int offset() {
            return chunk.offset;
        }

        @Override
        public long address() {
            return chunk.registration.address() + chunk.offset;
        }

        @Override
        public int lkey() {
            return chunk.registration.lkey();
        }

        @Override
        public int rkey() {
            return chunk.registration.rkey();
        }

        @Override
        public Registration registration() {
            return chunk.registration;
        }

        @Override
        public BufferPool pool() {
            return pool;
        }

        @Override
        public int length() {
            return length;
        }

        @Override
        public void free() {
            pool.recycle(chunk);
        }

        @Override
        public String toString() {
            return "pooled RegisteredBuffer{" + length + " bytes" + (isReleased() ? ", released" : "") + "}";
        }
    }

    /** Memory the user registered. */
    static final class UserRegistration extends Root {
        private final BufferPool pool;
        private final ByteBuffer memory;
        final Registration registration;

        UserRegistration(BufferPool pool, ByteBuffer memory, Registration registration, Set<RemoteAccess> access) {
            super(access);
            this.pool = pool;
            this.memory = memory;
            this.registration = registration;
        }

        @Override
        public ByteBuffer memory() {
            return memory;
        }

        @Override
        public int offset() {
            return 0;
        }

        @Override
        public long address() {
            return registration.address();
        }

        @Override
        public int lkey() {
            return registration.lkey();
        }

        @Override
        public int rkey() {
            return registration.rkey();
        }

        @Override
        public Registration registration() {
            return registration;
        }

        @Override
        public BufferPool pool() {
            return pool;
        }

        @Override
        public int length() {
            return memory.capacity();
        }

        @Override
        public void free() {
            pool.deregistered(this);
        }

        @Override
        public String toString() {
            return "registered RegisteredBuffer{" + length() + " bytes, remote " + access
                    + (isReleased() ? ", released" : "") + "}";
        }
    }
}
