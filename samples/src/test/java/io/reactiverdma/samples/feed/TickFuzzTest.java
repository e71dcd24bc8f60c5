package io.reactiverdma.samples.feed;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

import static io.reactiverdma.samples.common.HostileInput.decodeOrRefuse;
import static io.reactiverdma.samples.common.HostileInput.toArray;
import static io.reactiverdma.samples.common.HostileInput.truncated;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Fuzzes the feed's tick decoder (run on the engine's poller thread for every datagram on the group, which
 * any member of the fabric can send to), under the contract the key-value and bulk decoders meet
 * ({@link io.reactiverdma.samples.common.HostileInput}): anything that is not a tick of this run is refused
 * with {@link NotATickException}; ticks decode to what was encoded.
 */
class TickFuzzTest {
    private static final long RUN = 0x5eed_0001_2345_6789L;

    @Property
    void randomBytesAreRefused(@ForAll @Size(max = 300) byte[] bytes) {
        assertNull(decodeOrRefuse(bytes, b -> Tick.decode(b, RUN), NotATickException.class));
    }

    @Property
    void ticksSurviveTheRoundTrip(@ForAll @LongRange(min = 0) long seq, @ForAll int instrument, @ForAll long price,
            @ForAll @IntRange(min = 0, max = 4096) int size) {
        Tick t = new Tick(seq, instrument, price);
        assertEquals(t, decodeOrRefuse(toArray(t.encode(RUN, size)), b -> Tick.decode(b, RUN),
                NotATickException.class));
    }

    @Property
    void cutTicksAreRefused(@ForAll @LongRange(min = 0) long seq, @ForAll @IntRange(min = 0, max = Tick.SIZE - 1) int cut) {
        byte[] bytes = truncated(toArray(new Tick(seq, 1, 2).encode(RUN, 64)), cut);
        assertNull(decodeOrRefuse(bytes, b -> Tick.decode(b, RUN), NotATickException.class));
    }

    @Property
    void ticksOfAnotherRunAreRefused(@ForAll @LongRange(min = 0) long seq, @ForAll long otherRun) {
        byte[] bytes = toArray(new Tick(seq, 1, 2).encode(otherRun, 64));
        Tick back = decodeOrRefuse(bytes, b -> Tick.decode(b, RUN), NotATickException.class);
        assertEquals(otherRun == RUN, back != null);
    }

    @Property
    void negativeSequenceNumbersAreRefused(@ForAll @LongRange(min = Long.MIN_VALUE, max = -1) long seq) {
        assertNull(decodeOrRefuse(toArray(new Tick(seq, 1, 2).encode(RUN, 64)), b -> Tick.decode(b, RUN),
                NotATickException.class));
    }
}
