package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.ConnectionClosedException;
import io.reactiverdma.reactive.InvalidRequestException;
import io.reactiverdma.reactive.InvalidRequestException.Reason;
import io.reactiverdma.reactive.RdmaException;
import io.reactiverdma.reactive.RegisteredBuffer;
import io.reactiverdma.reactive.RemoteAccess;
import io.reactiverdma.reactive.RemoteRegion;
import io.reactiverdma.reactive.impl.device.FakeRegistrar.FakeRegistration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The registered-memory pool with a fake registrar: size classes, slab carving and reuse, holds, slices,
 * user registrations, close, and the typed errors.
 */
class BufferPoolHostTest {
    private static final int SLAB = 4096;

    private final FakeRegistrar registrar = new FakeRegistrar();
    private final BufferPool pool = new BufferPool(registrar, SLAB, "host test");

    private static EngineBuffer eb(RegisteredBuffer b) {
        return (EngineBuffer) b;
    }

    private static void assertInvalid(Reason reason, Executable call) {
        InvalidRequestException e = assertThrows(InvalidRequestException.class, call);
        assertEquals(reason, e.reason(), e.getMessage());
    }

    /** A closed pool refuses as a closed connection does: one type for "closed". */
    private static void assertClosed(Executable call) {
        ConnectionClosedException e = assertThrows(ConnectionClosedException.class, call);
        assertTrue(e.getMessage().contains("is closed"), e.getMessage());
    }

    // ------------------------------------------------------------------------------------ construction

    @Test
    void slabSizeMustBeAPowerOfTwoOfAtLeastTheMinimumChunk() {
        assertThrows(IllegalArgumentException.class, () -> new BufferPool(registrar, 3000, "x"));
        assertThrows(IllegalArgumentException.class, () -> new BufferPool(registrar, 32, "x"));
        assertThrows(IllegalArgumentException.class, () -> new BufferPool(registrar, 0, "x"));
        assertThrows(IllegalArgumentException.class, () -> new BufferPool(registrar, Integer.MIN_VALUE, "x"));
        assertThrows(NullPointerException.class, () -> new BufferPool(null, 4096, "x"));
        assertEquals(64, new BufferPool(registrar, 64, "x").maxAllocationSize());
        assertEquals(SLAB, pool.maxAllocationSize());
        assertEquals(0, registrar.registerCalls(), "slabs are registered lazily");
    }

    // ------------------------------------------------------------------------------ size classes, slabs

    @Test
    void allocationsAreRoundedUpToPowerOfTwoChunksOfAtLeast64Bytes() {
        int[][] sizeToChunk = {
                {1, 64}, {2, 64}, {63, 64}, {64, 64}, {65, 128}, {127, 128}, {128, 128}, {129, 256},
                {1000, 1024}, {1024, 1024}, {1025, 2048}, {SLAB - 1, SLAB}, {SLAB, SLAB}};
        for (int[] c : sizeToChunk) {
            long before = pool.pooledBytesInUse();
            RegisteredBuffer b = pool.allocate(c[0]);
            assertEquals(c[1], pool.pooledBytesInUse() - before, "chunk for " + c[0] + " bytes");
            assertEquals(c[0], b.length(), "length is what was asked for");
            ByteBuffer view = b.buffer();
            assertEquals(0, view.position());
            assertEquals(c[0], view.limit());
            assertEquals(c[0], view.capacity());
            assertTrue(view.isDirect());
            assertEquals(ByteOrder.BIG_ENDIAN, view.order(), "big-endian like every Java ByteBuffer (API contract)");
            assertEquals(0, eb(b).offset() % c[1], "chunks are aligned to their size in the slab");
        }
    }

    @Test
    void aSlabIsCarvedIntoChunksOfOneSizeClassAndRegisteredOnce() {
        List<RegisteredBuffer> taken = new ArrayList<>();
        Set<Long> addresses = new HashSet<>();
        for (int i = 0; i < SLAB / 64; i++) {
            RegisteredBuffer b = pool.allocate(50);
            taken.add(b);
            assertTrue(addresses.add(eb(b).address()), "distinct chunks");
        }
        assertEquals(1, pool.slabCount());
        assertEquals(1, registrar.registerCalls());
        FakeRegistration slab = registrar.last();
        assertEquals(SLAB, slab.buffer.capacity());
        assertTrue(slab.access.isEmpty(), "pooled slabs grant no remote access");
        for (RegisteredBuffer b : taken) {
            EngineBuffer e = eb(b);
            assertEquals(slab.address + e.offset(), e.address());
            assertEquals(slab.lkey, e.lkey());
            assertEquals(slab.rkey, e.rkey());
            assertSame(slab.buffer, e.memory(), "chunks are views of the registered slab");
            assertSame(pool, e.pool());
        }
        // The 65th 64-byte chunk needs a second slab; a different size class never shares a slab.
        pool.allocate(64);
        assertEquals(2, pool.slabCount());
        pool.allocate(128);
        assertEquals(3, pool.slabCount());
        assertEquals(3, registrar.registerCalls());
    }

    @Test
    void chunksDoNotOverlap() {
        RegisteredBuffer a = pool.allocate(64);
        RegisteredBuffer b = pool.allocate(64);
        ByteBuffer va = a.buffer();
        while (va.hasRemaining()) {
            va.put((byte) 0x11);
        }
        ByteBuffer vb = b.buffer();
        while (vb.hasRemaining()) {
            vb.put((byte) 0x22);
        }
        for (int i = 0; i < 64; i++) {
            assertEquals(0x11, a.buffer().get(i));
            assertEquals(0x22, b.buffer().get(i));
        }
    }

    @Test
    void aReleasedBufferGoesBackAndIsHandedOutAgain() {
        List<RegisteredBuffer> all = new ArrayList<>();
        for (int i = 0; i < SLAB / 128; i++) {
            all.add(pool.allocate(100));
        }
        assertEquals(SLAB, pool.pooledBytesInUse());
        RegisteredBuffer victim = all.get(7);
        long address = eb(victim).address();
        victim.release();
        assertTrue(victim.isReleased());
        assertEquals(SLAB - 128, pool.pooledBytesInUse());

        RegisteredBuffer again = pool.allocate(128); // same size class, another requested length
        assertEquals(address, eb(again).address(), "the recycled chunk is reused");
        assertEquals(1, pool.slabCount(), "no new slab was needed");
        assertEquals(1, registrar.registerCalls());
        assertFalse(again.isReleased(), "a new buffer object, not released");
        assertNotSame(victim, again);
        assertEquals(128, again.length());
        assertInvalid(Reason.BUFFER_RELEASED, victim::buffer);
    }

    @Test
    void doubleReleaseIsIdempotent() {
        List<RegisteredBuffer> all = new ArrayList<>();
        for (int i = 0; i < SLAB / 1024; i++) {
            all.add(pool.allocate(1024));
        }
        RegisteredBuffer b = all.get(0);
        b.release();
        b.release();
        b.release();
        assertEquals(SLAB - 1024, pool.pooledBytesInUse(), "counted back once");
        // The chunk is on the free list once: two allocations cannot both get it.
        RegisteredBuffer x = pool.allocate(1024);
        RegisteredBuffer y = pool.allocate(1024);
        assertNotEquals(eb(x).address(), eb(y).address());
        assertEquals(2, pool.slabCount(), "the second allocation needed a new slab");
        assertEquals(SLAB + 1024, pool.pooledBytesInUse());
    }

    @Test
    void tooLargeOrEmptyAllocationsAreInvalidRequests() {
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocate(SLAB + 1));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocate(Integer.MAX_VALUE));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocate(0));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocate(-1));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocate(Integer.MIN_VALUE));
        InvalidRequestException e = assertThrows(InvalidRequestException.class, () -> pool.allocate(SLAB * 2));
        assertTrue(e.getMessage().contains(String.valueOf(SLAB)), e.getMessage());
        assertEquals(0, registrar.registerCalls(), "nothing was registered for refused requests");
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void aSlabThatCannotBeRegisteredFailsTheAllocationAndTheNextOneRetries() {
        registrar.failNextRegister = new IllegalStateException("ENOMEM");
        RdmaException e = assertThrows(RdmaException.class, () -> pool.allocate(100));
        assertFalse(e instanceof InvalidRequestException, "a resource failure, not an invalid request");
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getMessage().contains("ENOMEM"), e.getMessage());
        assertEquals(0, pool.slabCount());
        assertEquals(0, pool.pooledBytesInUse());
        RegisteredBuffer b = pool.allocate(100);
        assertEquals(1, pool.slabCount());
        assertEquals(128, pool.pooledBytesInUse());
        assertEquals(100, b.length());
    }

    // ---------------------------------------------------------------------------------------- holds

    @Test
    void aHeldBufferIsRecycledOnlyWhenTheLastHoldIsDropped() {
        EngineBuffer b = pool.allocatePooled(64);
        assertEquals(1, ((EngineBuffer.Root) b).holds(), "the owner's hold");
        assertTrue(b.retain());
        assertTrue(b.retain());
        assertEquals(3, ((EngineBuffer.Root) b).holds());

        b.release();
        assertTrue(b.isReleased());
        assertEquals(64, pool.pooledBytesInUse(), "operations still hold it");
        assertFalse(b.retain(), "no new hold after release");
        assertEquals(2, ((EngineBuffer.Root) b).holds());

        b.unretain();
        assertEquals(64, pool.pooledBytesInUse());
        b.unretain();
        assertEquals(0, pool.pooledBytesInUse(), "recycled with the last hold");
        assertThrows(IllegalStateException.class, b::unretain, "a hold dropped twice is a bug");
    }

    @Test
    void holdsTakenAndDroppedConcurrentlyFreeTheChunkExactlyOnce() throws Exception {
        int threads = 4;
        int rounds = 20_000;
        for (int attempt = 0; attempt < 20; attempt++) {
            EngineBuffer b = pool.allocatePooled(64);
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService ex = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> fs = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    fs.add(ex.submit(() -> {
                        start.await();
                        int held = 0;
                        for (int i = 0; i < rounds; i++) {
                            if (b.retain()) {
                                held++;
                                b.unretain();
                            }
                        }
                        return held;
                    }));
                }
                start.countDown();
                b.release();
                for (Future<Integer> f : fs) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                ex.shutdownNow();
            }
            assertEquals(0, ((EngineBuffer.Root) b).holds());
            assertEquals(0, pool.pooledBytesInUse(), "attempt " + attempt);
        }
        // Every chunk came back exactly once: the 64 chunks of the one slab are distinct and suffice.
        Set<Long> addresses = new HashSet<>();
        for (int i = 0; i < SLAB / 64; i++) {
            assertTrue(addresses.add(eb(pool.allocate(64)).address()));
        }
        assertEquals(1, pool.slabCount());
    }

    // --------------------------------------------------------------------------------------- slices

    @Test
    void slicesShareTheRootsMemoryRegistrationAndLifetime() {
        EngineBuffer root = pool.allocatePooled(256);
        RegisteredBuffer s = root.slice(16, 32);
        EngineBuffer es = eb(s);
        assertEquals(32, s.length());
        assertEquals(root.address() + 16, es.address());
        assertEquals(root.lkey(), es.lkey());
        assertEquals(root.rkey(), es.rkey());
        assertSame(root, es.root());
        assertSame(pool, es.pool());

        s.buffer().putLong(0, 0x0102_0304_0506_0708L);
        assertEquals(0x0102_0304_0506_0708L, root.buffer().getLong(16), "a slice writes the root's memory");
        assertEquals(32, s.buffer().capacity());

        RegisteredBuffer inner = s.slice(8, 8);
        assertEquals(root.address() + 24, eb(inner).address(), "a slice of a slice is relative to its parent");
        assertSame(root, eb(inner).root());
        root.buffer().putLong(24, 42L);
        assertEquals(42L, inner.buffer().getLong(0));

        assertTrue(eb(s).retain(), "a slice's hold is the root's");
        assertEquals(2, ((EngineBuffer.Root) root).holds());
        s.release();
        assertFalse(s.isReleased(), "releasing a slice does nothing");
        assertFalse(root.isReleased());
        root.release();
        assertTrue(s.isReleased(), "a slice is released with its root");
        assertTrue(inner.isReleased());
        assertInvalid(Reason.BUFFER_RELEASED, s::buffer);
        assertEquals(256, pool.pooledBytesInUse(), "the slice's hold keeps the chunk");
        eb(s).unretain();
        assertEquals(0, pool.pooledBytesInUse());
    }

    @Test
    void slicesOutsideTheBufferAreRefused() {
        RegisteredBuffer b = pool.allocate(100);
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(-1, 10));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(0, -1));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(0, 101));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(101, 0));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(50, 51));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(Integer.MAX_VALUE, 1));
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(1, Integer.MAX_VALUE));
        // A pooled chunk is 128 bytes, but the buffer is 100: the slack is not reachable.
        assertInvalid(Reason.OUTSIDE_REGION, () -> b.slice(100, 28));
        assertEquals(0, b.slice(100, 0).length(), "an empty slice at the end is fine");
        assertEquals(100, b.slice(0, 100).length());
        RegisteredBuffer s = b.slice(10, 20);
        assertInvalid(Reason.OUTSIDE_REGION, () -> s.slice(0, 21));
        assertInvalid(Reason.OUTSIDE_REGION, () -> s.slice(15, 6));
    }

    @Test
    void pooledBuffersHaveNoRemoteAccess() {
        RegisteredBuffer b = pool.allocate(64);
        assertTrue(b.remoteAccess().isEmpty());
        assertInvalid(Reason.ACCESS_NOT_GRANTED, b::remoteRegion);
        assertInvalid(Reason.ACCESS_NOT_GRANTED, () -> b.slice(0, 8).remoteRegion());
    }

    // ---------------------------------------------------------------------------- user registrations

    @Test
    void userRegistrationRegistersExactlyTheRemainingBytesWithTheAccessAskedFor() {
        ByteBuffer mine = ByteBuffer.allocateDirect(1000);
        mine.position(100).limit(600);
        RegisteredBuffer r = pool.register(mine, RemoteAccess.READ, RemoteAccess.WRITE, RemoteAccess.READ);
        FakeRegistration reg = registrar.last();
        assertEquals(500, reg.buffer.capacity(), "position..limit of the caller's buffer");
        assertEquals(EnumSet.of(RemoteAccess.READ, RemoteAccess.WRITE), reg.access);
        assertEquals(EnumSet.of(RemoteAccess.READ, RemoteAccess.WRITE), r.remoteAccess());
        assertThrows(UnsupportedOperationException.class, () -> r.remoteAccess().add(RemoteAccess.ATOMIC));
        assertEquals(500, r.length());
        assertEquals(100, mine.position(), "the caller's buffer position is untouched");

        mine.put(100, (byte) 0x5A);
        assertEquals(0x5A, r.buffer().get(0), "the registration is the caller's memory, not a copy");

        RemoteRegion region = r.remoteRegion();
        assertEquals(RemoteRegion.of(reg.address, 500, reg.rkey), region);
        assertEquals(RemoteRegion.of(reg.address + 10, 20, reg.rkey), r.slice(10, 20).remoteRegion());
        assertEquals(0, pool.pooledBytesInUse(), "user memory is not pooled");
        assertEquals(0, pool.slabCount());

        r.release();
        assertEquals(1, reg.deregistrations.get(), "release deregisters");
        r.release();
        assertEquals(1, reg.deregistrations.get(), "once");
        assertInvalid(Reason.BUFFER_RELEASED, r::remoteRegion);
        assertInvalid(Reason.BUFFER_RELEASED, r::buffer);
    }

    @Test
    void userRegistrationIsDeregisteredAfterTheLastHold() {
        EngineBuffer r = eb(pool.allocateRegistered(64, RemoteAccess.ATOMIC));
        FakeRegistration reg = registrar.last();
        assertEquals(EnumSet.of(RemoteAccess.ATOMIC), reg.access);
        assertEquals(64, r.length());
        assertTrue(r.retain());
        r.release();
        assertEquals(0, reg.deregistrations.get(), "an operation still holds it");
        r.unretain();
        assertEquals(1, reg.deregistrations.get());
        pool.close();
        assertEquals(1, reg.deregistrations.get(), "close does not deregister it again");
    }

    @Test
    void invalidUserRegistrationsAreRefused() {
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.register(ByteBuffer.allocate(64)));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.register(ByteBuffer.allocateDirect(64).asReadOnlyBuffer()));
        ByteBuffer empty = ByteBuffer.allocateDirect(64);
        empty.position(64);
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.register(empty));
        assertThrows(NullPointerException.class, () -> pool.register(null));
        assertThrows(NullPointerException.class,
                () -> pool.register(ByteBuffer.allocateDirect(8), RemoteAccess.READ, null));
        assertThrows(NullPointerException.class, () -> pool.register(ByteBuffer.allocateDirect(8), (RemoteAccess[]) null));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocateRegistered(0));
        assertInvalid(Reason.ILLEGAL_ARGUMENT, () -> pool.allocateRegistered(-8, RemoteAccess.READ));
        assertEquals(0, registrar.registerCalls());
    }

    @Test
    void aRegistrationFailureIsAnRdmaExceptionAndLeavesNothingBehind() {
        registrar.failNextRegister = new IllegalArgumentException("EINVAL");
        RdmaException e = assertThrows(RdmaException.class,
                () -> pool.register(ByteBuffer.allocateDirect(64), RemoteAccess.WRITE));
        assertTrue(e.getMessage().contains("EINVAL"), e.getMessage());
        pool.close();
        assertEquals(0, registrar.registerCalls());
    }

    // ----------------------------------------------------------------------------------------- close

    @Test
    void closeDeregistersEverySlabAndUserRegistrationOnce() {
        RegisteredBuffer small = pool.allocate(10);
        pool.allocate(1000);
        pool.allocate(SLAB);
        RegisteredBuffer user = pool.register(ByteBuffer.allocateDirect(128), RemoteAccess.READ);
        RegisteredBuffer released = pool.allocateRegistered(32, RemoteAccess.WRITE);
        released.release();
        assertEquals(5, registrar.registerCalls());
        assertEquals(1, registrar.deregistered(), "the released user registration");

        pool.close();
        for (FakeRegistration r : registrar.registrations()) {
            assertEquals(1, r.deregistrations.get(), "exactly once: " + r.buffer.capacity() + " bytes");
        }
        assertEquals(0, pool.slabCount());

        pool.close();
        for (FakeRegistration r : registrar.registrations()) {
            assertEquals(1, r.deregistrations.get(), "a second close does nothing");
        }
        user.release();
        small.release();
        for (FakeRegistration r : registrar.registrations()) {
            assertEquals(1, r.deregistrations.get(), "releasing after close does not deregister again");
        }
        assertEquals(SLAB + 1024, pool.pooledBytesInUse(), "the small buffer was counted back");
    }

    @Test
    void aClosedPoolRefusesWorkWithConnectionClosedException() {
        pool.allocate(64).release();
        pool.close();
        assertClosed(() -> pool.allocate(64));
        assertClosed(() -> pool.register(ByteBuffer.allocateDirect(64)));
        assertClosed(() -> pool.allocateRegistered(64, RemoteAccess.READ));
        assertEquals(1, registrar.registerCalls(), "no slab is carved after close, even from the free list");
    }

    @Test
    void closeDeregistersTheRestWhenOneDeregistrationFails() {
        pool.allocate(64);
        pool.allocate(128);
        pool.allocate(256);
        List<FakeRegistration> regs = registrar.registrations();
        RuntimeException first = new IllegalStateException("EBUSY 1");
        RuntimeException second = new IllegalStateException("EBUSY 2");
        regs.get(0).failOnDeregister = first;
        regs.get(2).failOnDeregister = second;
        RuntimeException thrown = assertThrows(RuntimeException.class, pool::close);
        assertSame(first, thrown);
        assertEquals(List.of(second), List.of(thrown.getSuppressed()));
        for (FakeRegistration r : regs) {
            assertEquals(1, r.deregistrations.get());
        }
        assertClosed(() -> pool.allocate(64));
    }
}
