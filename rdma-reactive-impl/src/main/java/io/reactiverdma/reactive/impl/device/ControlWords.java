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
 * cache line) in a region registered without remote access. Where the device has memory windows, the
 * connection binds a type 2 window onto its slot's 8-byte incoming word, valid on its own QP only
 * ({@code connection.CreditWindow}): a peer can write its own connection's word and nothing else, whatever
 * rkey it tries, and the window dies with the connection. Without windows the incoming word alone is
 * registered for remote WRITE, on its own, for the time the connection uses the slot: then a peer that
 * guesses another connection's rkey (an index and an 8-bit key) can write that connection's word.
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

    /** Without windows: each slot's incoming word gets its own registration with remote WRITE. */
    private final boolean registerEachWord;

    ControlWords(BufferPool pool, boolean registerEachWord) {
        this.pool = pool;
        this.registerEachWord = registerEachWord;
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
        if (registerEachWord) {
            try {
                s.expose(pool);
            } catch (RuntimeException e) {
                free.add(s);
                throw e;
            }
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

        /** Address the peer writes its counter to (in the word's own registration when it has one). */
        public long incomingAddress() {
            return incoming != null ? incoming.address() : region.address() + offset;
        }

        /**
         * The rkey of this slot's own registration of its incoming word; 0 where the device has windows (the
         * word is then reached through its connection's window only).
         */
        public int rkey() {
            return incoming != null ? incoming.rkey() : 0;
        }

        /** The region's registration: what a window onto the incoming word is bound onto. */
        public io.reactiverdma.reactive.impl.verbs.Registration registration() {
            return region.registration();
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
