package io.reactiverdma.reactive;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fuzzes the 20-byte {@code RemoteRegion} a peer sends (every sample puts them in its messages): whatever
 * the bytes, {@code readFrom} returns a region that does not wrap and has a non-negative length, or refuses
 * with {@link InvalidRequestException} naming the problem and leaves the buffer where it was.
 */
class RemoteRegionFuzzTest {
    @Property
    void anyBytesAtAnyPositionGiveAValidRegionOrATypedRefusal(@ForAll @Size(max = 48) byte[] bytes,
                                                              @ForAll @IntRange(max = 48) int position) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        b.position(Math.min(position, bytes.length));
        int before = b.position();
        RemoteRegion r;
        try {
            r = RemoteRegion.readFrom(b);
        } catch (InvalidRequestException e) {
            assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
            assertTrue(e.getMessage().contains("RemoteRegion") || e.getMessage().contains("remote region"),
                    e.getMessage());
            assertEquals(before, b.position(), "a refused region moved the buffer");
            return;
        } catch (RuntimeException e) {
            fail("readFrom threw " + e + " instead of InvalidRequestException", e);
            return;
        }
        assertEquals(before + RemoteRegion.ENCODED_SIZE, b.position());
        assertTrue(r.length() >= 0 && Long.compareUnsigned(r.address() + r.length(), r.address()) >= 0, r::toString);
        // What was accepted encodes back to the same bytes.
        ByteBuffer again = r.writeTo(ByteBuffer.allocate(RemoteRegion.ENCODED_SIZE)).flip();
        assertEquals(ByteBuffer.wrap(bytes, before, RemoteRegion.ENCODED_SIZE), again);
    }

    @Property
    void fromBytesTakesExactlyTwentyBytes(@ForAll @Size(max = 40) byte[] bytes) {
        try {
            RemoteRegion.fromBytes(bytes);
            assertEquals(RemoteRegion.ENCODED_SIZE, bytes.length);
        } catch (InvalidRequestException e) {
            assertEquals(InvalidRequestException.Reason.ILLEGAL_ARGUMENT, e.reason());
        }
    }
}
