package io.reactiverdma.reactive.impl.device;

import io.reactiverdma.reactive.RemoteAccess;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-connection flow-control words in registered memory. Each connection gets a 64-byte slot (its own
 * cache line) in a locally registered region; the 8-byte incoming word alone is registered for remote
 * WRITE, on its own, for the time the connection uses the slot. So a peer can write its own connection's
 * word and nothing else (not another connection's word, not the rest of the region), and a peer of a
 * closed connection holds an rkey that no longer works once the slot is reused.
 * <pre>
 *   offset 0: incoming credit word, written by the peer (uint64, little-endian): receives the peer posted so far
 *   offset 8: outgoing word, the inline source of this side's credit updates
 * </pre>
 */
public final class ControlWords {
    static final int SLOT_SIZE = 64;
    static final int SLOTS_PER_REGION = 1024;
    private static final VarHandle LONG_LE = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final BufferPool pool;
    private final List<EngineBuffer> regions = new ArrayList<>();
    private final List<Slot> free = new ArrayList<>();

    ControlWords(BufferPool pool) {
        this.pool = pool;
    }

    public synchronized Slot allocate() {
        if (free.isEmpty()) {
            EngineBuffer region = (EngineBuffer) pool.allocateRegistered(SLOT_SIZE * SLOTS_PER_REGION); // local only
            regions.add(region);
            for (int i = SLOTS_PER_REGION - 1; i >= 0; i--) {
                free.add(new Slot(region, i * SLOT_SIZE));
            }
        }
        Slot s = free.remove(free.size() - 1);
        s.reset();
        try {
            s.expose(pool);
        } catch (RuntimeException e) {
            free.add(s);
            throw e;
        }
        return s;
    }

    public synchronized void free(Slot s) {
        s.unexpose();
        free.add(s);
    }

    /** One connection's words. */
    public static final class Slot {
        private final EngineBuffer region;
        private final ByteBuffer memory;
        private final int offset;
        /** The incoming word's own registration (remote WRITE) while a connection uses the slot. */
        private EngineBuffer incoming;

        Slot(EngineBuffer region, int offset) {
            this.region = region;
            this.memory = region.memory();
            this.offset = offset;
        }

        void reset() {
            LONG_LE.setVolatile(memory, offset, 0L);
            LONG_LE.setVolatile(memory, offset + 8, 0L);
        }

        void expose(BufferPool pool) {
            incoming = (EngineBuffer) pool.register(memory.slice(offset, 8), RemoteAccess.WRITE);
        }

        void unexpose() {
            if (incoming != null) {
                incoming.release();
                incoming = null;
            }
        }

        /** Address the peer writes its counter to. */
        public long incomingAddress() {
            return incoming.address();
        }

        /** The rkey of this slot's incoming word alone. */
        public int rkey() {
            return incoming.rkey();
        }

        /** The peer's counter as last written (a volatile read: the device writes it, not a Java thread). */
        public long incoming() {
            return (long) LONG_LE.getVolatile(memory, offset);
        }

        /** Sets the outgoing word (little-endian) and returns its address, the inline source of the WRITE. */
        public long outgoing(long value) {
            LONG_LE.setVolatile(memory, offset + 8, value);
            return region.address() + offset + 8;
        }

        public int lkey() {
            return region.lkey();
        }
    }
}
