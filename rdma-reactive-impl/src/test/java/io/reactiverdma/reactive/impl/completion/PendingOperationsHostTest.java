package io.reactiverdma.reactive.impl.completion;


import io.reactiverdma.reactive.OperationType;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The wr_id table: encoding, acquire/free/lookup, stale and duplicate detection, fullness, concurrency. */
class PendingOperationsHostTest {

    private static long wrId(int generation, int slot) {
        return ((long) generation << 32) | (slot & 0xffff_ffffL);
    }

    @Test
    void capacityMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new PendingOperations(0));
        assertThrows(IllegalArgumentException.class, () -> new PendingOperations(-5));
        assertEquals(1, new PendingOperations(1).capacity());
    }

    @Test
    void wrIdIsGenerationInHighBitsAndSlotInLowBits() {
        PendingOperations table = new PendingOperations(8);
        PendingOperation first = table.acquire();
        PendingOperation second = table.acquire();
        assertEquals(0, first.slot, "slot 0 is taken first");
        assertEquals(1, second.slot);
        assertEquals(wrId(1, 0), first.wrId());
        assertEquals(0x0000_0001_0000_0001L, second.wrId());
        assertEquals(1, (int) (second.wrId() >>> 32), "generation in the high 32 bits");
        assertEquals(1, (int) second.wrId(), "slot in the low 32 bits");

        // Three frees of the only slot of a one-slot table -> generation 4.
        PendingOperations one = new PendingOperations(1);
        PendingOperation only = one.acquire();
        for (int i = 0; i < 3; i++) {
            one.free(only);
            assertSame(only, one.acquire());
        }
        assertEquals(4, only.generation);
        assertEquals(0x0000_0004_0000_0000L, only.wrId());
    }

    @Test
    void lookupFindsTheLiveEntryByItsWrId() {
        PendingOperations table = new PendingOperations(16);
        List<PendingOperation> taken = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            PendingOperation p = table.acquire();
            p.type = OperationType.SEND;
            p.receiveIndex = 100 + i;
            taken.add(p);
        }
        assertEquals(10, table.inUse());
        Set<Long> ids = new HashSet<>();
        for (PendingOperation p : taken) {
            assertTrue(ids.add(p.wrId()), "wr_ids of live entries are unique");
            assertSame(p, table.lookup(p.wrId()));
        }
        assertEquals(0, table.staleCompletions());
    }

    @Test
    void acquireWithContentsFillsTheEntryAndFreeClearsIt() {
        PendingOperations table = new PendingOperations(2);
        CompletionTarget target = (p, status, opcode, vendorErr, byteLen, imm, wcFlags) -> { };
        Object op = new Object(); // what the entry stands for: the table only keeps the reference
        PendingOperation p = table.acquire(target, OperationType.WRITE, op, 5, 777L);
        assertTrue(p.inUse);
        PendingOperation found = table.lookup(p.wrId());
        assertSame(p, found);
        assertSame(target, found.connection);
        assertEquals(OperationType.WRITE, found.type);
        assertSame(op, found.operation);
        assertEquals(5, found.receiveIndex);
        assertEquals(777L, found.postedNs);
        table.free(p);
        assertNull(p.connection);
        assertNull(p.operation);
        assertEquals(-1, p.receiveIndex);
        PendingOperation q = table.acquire(target, OperationType.RECEIVE, null, 0, 1L);
        PendingOperation r = table.acquire(target, OperationType.RECEIVE, null, 1, 2L);
        assertNotEquals(q.slot, r.slot);
        assertThrows(IllegalStateException.class, () -> table.acquire(target, OperationType.SEND, null, -1, 3L),
                "full");
    }

    @Test
    void staleWrIdOfAReusedSlotIsDetectedAndNotMisdelivered() {
        PendingOperations table = new PendingOperations(1);
        PendingOperation p = table.acquire();
        long oldWrId = p.wrId();
        table.free(p);
        PendingOperation q = table.acquire(); // the same (only) slot, next generation
        assertSame(p, q, "entries are reused objects");
        long newWrId = q.wrId();
        assertNotEquals(oldWrId, newWrId, "reuse bumps the generation");
        assertEquals(oldWrId & 0xffff_ffffL, newWrId & 0xffff_ffffL, "same slot");
        assertEquals((oldWrId >>> 32) + 1, newWrId >>> 32);

        assertNull(table.lookup(oldWrId), "a completion of the previous user of the slot is stale");
        assertEquals(1, table.staleCompletions());
        assertTrue(q.inUse, "the current holder is untouched");
        assertSame(q, table.lookup(newWrId));
        assertEquals(1, table.staleCompletions());
    }

    @Test
    void duplicateCompletionOfAFreedSlotIsDetected() {
        PendingOperations table = new PendingOperations(4);
        PendingOperation p = table.acquire();
        long id = p.wrId();
        assertSame(p, table.lookup(id));
        table.free(p);
        assertNull(table.lookup(id), "the same wr_id again after its entry was freed");
        assertNull(table.lookup(id));
        assertEquals(2, table.staleCompletions());
    }

    @Test
    void foreignWrIdsAreCountedNotDelivered() {
        PendingOperations table = new PendingOperations(4);
        PendingOperation p = table.acquire();
        assertNull(table.lookup(wrId(1, 4)), "slot beyond the table");
        assertNull(table.lookup(-1L), "all ones");
        assertNull(table.lookup(wrId(1, -1)), "slot 0xffffffff");
        assertNull(table.lookup(0L), "generation 0 of slot 0 (live generation is 1)");
        assertNull(table.lookup(wrId(2, 0)), "a future generation");
        assertNull(table.lookup(wrId(1, 1)), "a free slot");
        assertEquals(6, table.staleCompletions());
        assertSame(p, table.lookup(p.wrId()));
    }

    @Test
    void freeClearsTheEntryAndFreeingTwiceIsRejected() {
        PendingOperations table = new PendingOperations(2);
        PendingOperation p = table.acquire();
        p.type = OperationType.READ;
        p.receiveIndex = 7;
        p.postedNs = 12345;
        table.free(p);
        assertFalse(p.inUse);
        assertNull(p.type);
        assertNull(p.connection);
        assertNull(p.operation);
        assertEquals(-1, p.receiveIndex);
        assertEquals(0, p.postedNs);
        int generation = p.generation;
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> table.free(p));
        assertTrue(e.getMessage().contains("slot 0"), e.getMessage());
        assertEquals(generation, p.generation, "a rejected double free changes nothing");
        assertEquals(0, table.inUse());
        // The slot is on the free list once, not twice: two acquires give two different slots.
        PendingOperation a = table.acquire();
        PendingOperation b = table.acquire();
        assertNotEquals(a.slot, b.slot);
        assertThrows(IllegalStateException.class, table::acquire);
    }

    @Test
    void fullTableThrowsAndRecoversWhenASlotIsFreed() {
        PendingOperations table = new PendingOperations(4);
        PendingOperation[] all = new PendingOperation[4];
        for (int i = 0; i < 4; i++) {
            all[i] = table.acquire();
        }
        assertEquals(4, table.inUse());
        IllegalStateException full = assertThrows(IllegalStateException.class, table::acquire);
        assertTrue(full.getMessage().contains("4"), full.getMessage());
        assertEquals(4, table.inUse(), "a refused acquire takes nothing");

        long old = all[2].wrId();
        table.free(all[2]);
        PendingOperation again = table.acquire();
        assertEquals(2, again.slot, "the freed slot is the one handed out");
        assertEquals(2, again.generation);
        assertEquals(wrId(2, 2), again.wrId());
        assertNull(table.lookup(old));
        assertSame(again, table.lookup(again.wrId()));
    }

    @Test
    void snapshotListsExactlyTheEntriesInUse() {
        PendingOperations table = new PendingOperations(5);
        PendingOperation a = table.acquire();
        PendingOperation b = table.acquire();
        PendingOperation c = table.acquire();
        table.free(b);
        PendingOperation[] live = table.snapshotInUse();
        assertArrayEquals(new PendingOperation[] {a, c}, live);
        table.free(a);
        table.free(c);
        assertEquals(0, table.snapshotInUse().length);
    }

    @Test
    void generationWrapAroundKeepsWrIdsDecodable() {
        PendingOperations table = new PendingOperations(3);
        table.acquire();
        PendingOperation p = table.acquire(); // slot 1
        table.free(p);
        // Pretend the slot was reused 2^31 - 2 more times: the generation crosses the int sign boundary.
        p.generation = Integer.MAX_VALUE;
        assertSame(p, table.acquire());
        long atMax = p.wrId();
        assertEquals(0x7fff_ffff_0000_0001L, atMax);
        assertSame(p, table.lookup(atMax));
        table.free(p);
        assertSame(p, table.acquire());
        assertEquals(Integer.MIN_VALUE, p.generation);
        assertEquals(0x8000_0000_0000_0001L, p.wrId());
        assertSame(p, table.lookup(p.wrId()), "a negative generation still matches");
        assertNull(table.lookup(atMax));
        p.generation = -1;
        assertSame(p, table.lookup(0xffff_ffff_0000_0001L));
        table.free(p);
        assertSame(p, table.acquire());
        assertEquals(0, p.generation);
        assertEquals(1L, p.wrId());
        assertSame(p, table.lookup(1L));
        assertNull(table.lookup(0xffff_ffff_0000_0001L));
    }
}
