package io.reactiverdma.samples.kv;

import io.reactiverdma.samples.common.Allocation;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Known hostile requests: refused, typed, before the server allocates what their length fields claim. */
class KvProtocolHostileInputTest {
    /** 12-byte header + a 1-byte key: a PUT_INLINE that claims a value of 0x7FFFFFF0 bytes. */
    private static ByteBuffer putInlineClaiming(int valueLength) {
        return ByteBuffer.allocate(13).put(KvProtocol.Op.PUT_INLINE.code()).put((byte) 0).putShort((short) 1)
                .putInt(42).putInt(valueLength).put((byte) 'k').flip();
    }

    @Test
    void aPutInlineClaimingTwoGibibytesIsRefusedWithoutAllocatingThem() {
        ByteBuffer hostile = putInlineClaiming(0x7FFFFFF0);
        KvException e = assertThrows(KvException.class, () -> KvProtocol.decodeRequest(hostile));
        assertEquals(KvException.Reason.PROTOCOL, e.reason());
        assertTrue(e.getMessage().contains("value length 2147483632"), e.getMessage());
        long allocated = Allocation.bytesAllocatedBy(() -> KvProtocol.decodeRequest(hostile));
        assertTrue(allocated < 64 * 1024, "decoding the 13-byte request allocated " + allocated + " bytes");
    }

    @Test
    void aKeyLengthBeyondTheMessageIsRefusedBeforeTheKeyIsAllocated() {
        ByteBuffer hostile = ByteBuffer.allocate(12).put(KvProtocol.Op.DELETE.code()).put((byte) 0)
                .putShort((short) 0xFFFF).putInt(7).putInt(0).flip();
        KvException e = assertThrows(KvException.class, () -> KvProtocol.decodeRequest(hostile));
        assertTrue(e.getMessage().contains("key length 65535"), e.getMessage());
    }
}
