package io.reactiverdma.samples.kv;

import io.reactiverdma.reactive.RemoteRegion;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Slot, handshake and message encodings, and the checks a reader applies to a slot. */
class KvCodecTest {
    private static final int SLOT = 256;
    private static final int KEY_MAX = 64;
    private static final int INLINE_MAX = SLOT - SlotCodec.HEADER_BYTES - KEY_MAX;

    static KvLayout layout(int slots, int maxProbe) {
        long tableBytes = (long) slots * SLOT + (1 << 16);
        return new KvLayout(slots, SLOT, KEY_MAX, maxProbe, 1 << 15, 1 << 16, 4,
                RemoteRegion.of(0x10000, tableBytes, 7), RemoteRegion.of(0x900000, 32, 8));
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static SlotCodec.Slot decode(ByteBuffer b, boolean verify) {
        return SlotCodec.decode(b, 0, SLOT, KEY_MAX, INLINE_MAX, verify);
    }

    private static long write(ByteBuffer b, String key, byte[] inline, int length, long offset) {
        return SlotCodec.write(b, 0, SLOT, KEY_MAX, SlotCodec.LIVE, bytes(key), length, offset, 6, inline);
    }

    @Test
    void aSlotRoundTripsInlineAndOutOfLine() {
        ByteBuffer b = ByteBuffer.allocateDirect(SLOT);
        byte[] v = bytes("value");
        assertEquals(2, write(b, "k", v, v.length, 0));
        SlotCodec.Slot s = decode(b, true);
        assertEquals(SlotCodec.Check.VALID, s.check());
        assertEquals(2, s.version());
        assertTrue(s.holds(bytes("k")));
        assertArrayEquals(v, s.inlineValue());

        assertEquals(4, write(b, "k", null, 100_000, 4096));
        s = decode(b, true);
        assertEquals(SlotCodec.Check.VALID, s.check());
        assertEquals(4, s.version());
        assertNull(s.inlineValue());
        assertEquals(100_000, s.valueLength());
        assertEquals(4096, s.valueOffset());
        assertEquals(6, s.blockGeneration());

        byte[] full = new byte[INLINE_MAX];
        Arrays.fill(full, (byte) 9);
        write(b, "k".repeat(KEY_MAX), full, full.length, 0);
        assertArrayEquals(full, decode(b, true).inlineValue());
    }

    @Test
    void aNeverWrittenSlotIsEmpty() {
        SlotCodec.Slot s = decode(ByteBuffer.allocate(SLOT), true);
        assertEquals(SlotCodec.Check.VALID, s.check());
        assertEquals(SlotCodec.EMPTY, s.state());
    }

    @Test
    void aSlotBeingWrittenIsTorn() {
        ByteBuffer b = ByteBuffer.allocateDirect(SLOT);
        write(b, "k", bytes("v"), 1, 0);
        b.putLong(SlotCodec.VERSION, 3); // what a reader sees between the odd and the even store
        assertEquals(SlotCodec.Check.TORN, decode(b, true).check());
    }

    @Test
    void aReadThatMixesTwoWritesIsTornWhateverTheOrderOfTheCopy() {
        ByteBuffer old = ByteBuffer.allocateDirect(SLOT);
        byte[] a = new byte[100];
        Arrays.fill(a, (byte) 'a');
        write(old, "key", a, a.length, 0);
        ByteBuffer next = ByteBuffer.allocateDirect(SLOT);
        next.put(0, old, 0, SLOT);
        byte[] b = new byte[100];
        Arrays.fill(b, (byte) 'b');
        write(next, "key", b, b.length, 0);
        // Every split point, both ways: the first part from one write, the rest from the other (a copy that
        // ran while the server wrote, in either direction). Only the two pure copies pass.
        int rejected = 0;
        for (int split = 1; split < SLOT; split++) {
            for (ByteBuffer[] order : new ByteBuffer[][] {{old, next}, {next, old}}) {
                ByteBuffer mixed = ByteBuffer.allocate(SLOT);
                mixed.put(0, order[0], 0, split).put(split, order[1], split, SLOT - split);
                SlotCodec.Slot s = decode(mixed, true);
                boolean same = mixed.equals(old.duplicate().clear()) || mixed.equals(next.duplicate().clear());
                if (s.check() == SlotCodec.Check.TORN) {
                    rejected++;
                } else {
                    assertTrue(same, "split " + split + " passed the checks with a mixed value");
                    assertTrue(Arrays.equals(a, s.inlineValue()) || Arrays.equals(b, s.inlineValue()));
                }
            }
        }
        assertTrue(rejected > 0);
        // The same mix with the checks off: what the checks prevent.
        ByteBuffer mixed = ByteBuffer.allocate(SLOT);
        int inlineStart = SlotCodec.KEY + KEY_MAX;
        mixed.put(0, old, 0, inlineStart + 50).put(inlineStart + 50, next, inlineStart + 50, SLOT - inlineStart - 50);
        byte[] value = decode(mixed, false).inlineValue();
        assertTrue(value[0] == 'a' && value[value.length - 1] == 'b', "unchecked: a torn value");
    }

    @Test
    void aFlippedByteFailsTheChecksum() {
        ByteBuffer b = ByteBuffer.allocateDirect(SLOT);
        write(b, "key", bytes("value"), 5, 0);
        for (int at : new int[] {SlotCodec.VERSION + 6, SlotCodec.STATE, SlotCodec.KEY_LENGTH + 1,
                SlotCodec.VALUE_LENGTH + 3, SlotCodec.VALUE_OFFSET + 7, SlotCodec.BLOCK_GENERATION, SlotCodec.KEY + 1, SlotCodec.KEY + KEY_MAX}) {
            ByteBuffer copy = ByteBuffer.allocate(SLOT).put(0, b, 0, SLOT);
            copy.put(at, (byte) (copy.get(at) ^ 0x10));
            assertEquals(SlotCodec.Check.TORN, decode(copy, true).check(), "byte " + at);
        }
    }

    @Test
    void theHandshakeRoundTripsAndAForeignOneIsAProtocolError() {
        KvLayout l = layout(1024, 16);
        ByteBuffer m = l.encode();
        assertEquals(KvLayout.ENCODED_SIZE, m.remaining());
        assertEquals(l, KvLayout.decode(m));
        assertEquals(INLINE_MAX, l.inlineMaxBytes());
        ByteBuffer bad = l.encode();
        bad.putInt(0, 0x12345678);
        assertEquals(KvException.Reason.PROTOCOL, assertThrows(KvException.class, () -> KvLayout.decode(bad)).reason());
        assertEquals(KvException.Reason.PROTOCOL,
                assertThrows(KvException.class, () -> KvLayout.decode(ByteBuffer.allocate(10))).reason());
        ByteBuffer inconsistent = l.encode();
        inconsistent.putInt(4, 1 << 20); // more slots than the table region holds
        assertEquals(KvException.Reason.PROTOCOL,
                assertThrows(KvException.class, () -> KvLayout.decode(inconsistent)).reason());
    }

    @Test
    void theKeyHashIsStableAndSpreads() {
        // Fixed: client and server in different JVMs (or versions) must agree.
        assertEquals(KvLayout.keyHash(bytes("hello")), KvLayout.keyHash(bytes("hello")));
        assertEquals(-1601765511430786492L, KvLayout.keyHash(bytes("hello")));
        KvLayout l = layout(1024, 16);
        Set<Integer> homes = new HashSet<>();
        for (int i = 0; i < 1000; i++) {
            int home = l.homeSlot(bytes("key-" + i));
            assertTrue(home >= 0 && home < 1024);
            homes.add(home);
        }
        assertTrue(homes.size() > 550, "1000 keys over 1024 slots land on " + homes.size() + " homes");
    }

    @Test
    void requestsAndResponsesRoundTrip() {
        RemoteRegion src = RemoteRegion.of(0xabc000, 5000, 42);
        for (KvProtocol.Request r : new KvProtocol.Request[] {
                KvProtocol.Request.putInline(1, bytes("k"), bytes("v")),
                KvProtocol.Request.putRemote(2, bytes("key"), 5000, src),
                KvProtocol.Request.delete(3, bytes("gone")),
                KvProtocol.Request.counter(-4, bytes("hits"))}) {
            KvProtocol.Request d = KvProtocol.decodeRequest(KvProtocol.encode(r));
            assertEquals(r.op(), d.op());
            assertEquals(r.id(), d.id());
            assertArrayEquals(r.key(), d.key());
            assertEquals(r.valueLength(), d.valueLength());
            assertArrayEquals(r.value(), d.value());
            assertEquals(r.source(), d.source());
        }
        KvProtocol.Response ok = new KvProtocol.Response(9, KvProtocol.Status.OK, 77, "");
        assertEquals(ok, KvProtocol.decodeResponse(KvProtocol.encode(ok)));
        KvProtocol.Response full = KvProtocol.decodeResponse(KvProtocol.encode(
                new KvProtocol.Response(10, KvProtocol.Status.TABLE_FULL, 0, "no room")));
        assertEquals(KvException.Reason.TABLE_FULL, full.failure().reason());
        assertEquals("no room", full.failure().getMessage());
        String longDetail = "x".repeat(1000);
        assertEquals(KvProtocol.MAX_DETAIL_BYTES, KvProtocol.decodeResponse(KvProtocol.encode(
                new KvProtocol.Response(11, KvProtocol.Status.PROTOCOL, 0, longDetail))).detail().length());
    }

    @Test
    void malformedMessagesAreProtocolErrors() {
        ByteBuffer put = KvProtocol.encode(KvProtocol.Request.putInline(5, bytes("k"), bytes("value")));
        ByteBuffer truncated = put.duplicate().limit(put.limit() - 1);
        assertEquals(KvException.Reason.PROTOCOL,
                assertThrows(KvException.class, () -> KvProtocol.decodeRequest(truncated)).reason());
        assertEquals(5, KvProtocol.requestIdOf(truncated));
        ByteBuffer longer = ByteBuffer.allocate(put.remaining() + 1).put(0, put, 0, put.remaining());
        assertThrows(KvException.class, () -> KvProtocol.decodeRequest(longer));
        ByteBuffer unknownOp = ByteBuffer.allocate(12).put(0, (byte) 99);
        assertThrows(KvException.class, () -> KvProtocol.decodeRequest(unknownOp));
        ByteBuffer shortSource = KvProtocol.encode(
                KvProtocol.Request.putRemote(6, bytes("k"), 5000, RemoteRegion.of(0x1000, 4999, 1)));
        assertThrows(KvException.class, () -> KvProtocol.decodeRequest(shortSource));
        assertThrows(KvException.class, () -> KvProtocol.decodeResponse(put));
        assertThrows(KvException.class, () -> KvProtocol.decodeResponse(ByteBuffer.allocate(3)));
    }
}
