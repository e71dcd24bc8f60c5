package io.reactiverdma.samples.bulk;

import io.reactiverdma.reactive.RemoteRegion;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

import io.reactiverdma.samples.common.WireArbitraries;

import static io.reactiverdma.samples.common.HostileInput.decodeOrRefuse;
import static io.reactiverdma.samples.common.HostileInput.toArray;
import static io.reactiverdma.samples.common.HostileInput.truncated;
import static io.reactiverdma.samples.common.HostileInput.withShort;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzzes the bulk protocol's control-message decoder (run on the poller thread of both ends): random bytes,
 * valid messages cut short or with a lying ERROR text length are refused with {@link BulkTransferException}
 * (PROTOCOL) before allocating; valid messages decode to what was encoded.
 */
class BulkProtocolFuzzTest {
    @Provide
    Arbitrary<BulkProtocol.Message> messages() {
        Arbitrary<RemoteRegion> regions = WireArbitraries.remoteRegions();
        Arbitrary<Integer> slots = Arbitraries.integers().between(0, 63);
        Arbitrary<Long> seqs = Arbitraries.longs().greaterOrEqual(0);
        return Arbitraries.oneOf(
                Combinators.combine(Arbitraries.of(TransferMode.class), Arbitraries.integers(),
                        Arbitraries.integers(), Arbitraries.longs()).as(BulkProtocol.Hello::new),
                Combinators.combine(slots, regions).as(BulkProtocol.Advertise::new),
                Combinators.combine(slots, seqs, regions).as(BulkProtocol.Ready::new),
                Combinators.combine(slots, seqs).as(BulkProtocol.Free::new),
                Combinators.combine(seqs, Arbitraries.bytes().array(byte[].class).ofSize(32))
                        .as(BulkProtocol.Result::new),
                Arbitraries.strings().ofMaxLength(80).map(BulkProtocol.Error::new));
    }

    @Property
    void randomBytesAreDecodedOrRefused(@ForAll @Size(max = 300) byte[] bytes) {
        decodeOrRefuse(bytes, BulkProtocol::decode, BulkTransferException.class);
    }

    @Property
    void validMessagesSurviveTheRoundTrip(@ForAll("messages") BulkProtocol.Message m) {
        BulkProtocol.Message back = decodeOrRefuse(toArray(BulkProtocol.encode(m)), BulkProtocol::decode,
                BulkTransferException.class);
        assertEquals(String.valueOf(m), String.valueOf(back));
    }

    @Property
    void cutMessagesAreRefused(@ForAll("messages") BulkProtocol.Message m, @ForAll int cut) {
        byte[] bytes = toArray(BulkProtocol.encode(m));
        byte[] shorter = truncated(bytes, Math.floorMod(cut, bytes.length));
        assertEquals(null, decodeOrRefuse(shorter, BulkProtocol::decode, BulkTransferException.class),
                "a message cut to " + shorter.length + " of " + bytes.length + " bytes was accepted");
    }

    /** An ERROR's text length (offset 1) that is not the text's: refused, never allocated. */
    @Property
    void errorsWithALyingTextLengthAreRefused(@ForAll @Size(max = 100) String text, @ForAll short length) {
        byte[] bytes = toArray(BulkProtocol.encode(new BulkProtocol.Error(text)));
        byte[] tampered = withShort(bytes, 1, length);
        BulkProtocol.Message back = decodeOrRefuse(tampered, BulkProtocol::decode, BulkTransferException.class);
        assertEquals(length == (short) (bytes.length - 3), back != null, "text length " + length + " of "
                + (bytes.length - 3) + " bytes");
    }
}
