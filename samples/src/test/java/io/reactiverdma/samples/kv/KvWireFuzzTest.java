package io.reactiverdma.samples.kv;

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
import static io.reactiverdma.samples.common.HostileInput.withInt;
import static io.reactiverdma.samples.common.HostileInput.withShort;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Fuzzes the key-value sample's decoders (requests on the server's poller, responses and the handshake on
 * the client's) with random bytes and with valid messages whose length fields, tails or sizes were
 * tampered with: each refuses what does not fit with {@link KvException} (PROTOCOL), before allocating.
 */
class KvWireFuzzTest {
    @Provide
    Arbitrary<KvProtocol.Request> requests() {
        Arbitrary<byte[]> keys = Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
        Arbitrary<byte[]> values = Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
        Arbitrary<Integer> ids = Arbitraries.integers();
        Arbitrary<RemoteRegion> regions = WireArbitraries.remoteRegions();
        return Arbitraries.oneOf(
                Combinators.combine(ids, keys, values).as(KvProtocol.Request::putInline),
                Combinators.combine(ids, keys, regions).as((id, k, r) ->
                        KvProtocol.Request.putRemote(id, k, (int) Math.min(r.length(), Integer.MAX_VALUE), r)),
                Combinators.combine(ids, keys).as(KvProtocol.Request::delete),
                Combinators.combine(ids, keys).as(KvProtocol.Request::counter));
    }

    @Property
    void randomBytesAreDecodedOrRefusedAsRequests(@ForAll @Size(max = 400) byte[] bytes) {
        decodeOrRefuse(bytes, KvProtocol::decodeRequest, KvException.class);
    }

    @Property
    void validRequestsSurviveTheRoundTrip(@ForAll("requests") KvProtocol.Request r) {
        KvProtocol.Request back = decodeOrRefuse(toArray(KvProtocol.encode(r)), KvProtocol::decodeRequest,
                KvException.class);
        assertNotNull(back, "a valid request was refused: " + r);
        assertEquals(r.op(), back.op());
        assertEquals(r.id(), back.id());
        assertArrayEquals(r.key(), back.key());
        assertArrayEquals(r.value(), back.value());
        assertEquals(r.source(), back.source());
    }

    /** The key length (offset 2) and value length (offset 8) lie, or the message is cut or padded. */
    @Property
    void tamperedRequestsAreRefusedBeforeAllocating(@ForAll("requests") KvProtocol.Request r,
                                                    @ForAll int valueLength, @ForAll short keyLength,
                                                    @ForAll int cut, @ForAll @Size(max = 8) byte[] tail) {
        byte[] bytes = toArray(KvProtocol.encode(r));
        decodeOrRefuse(withInt(bytes, 8, valueLength), KvProtocol::decodeRequest, KvException.class);
        decodeOrRefuse(withShort(bytes, 2, keyLength), KvProtocol::decodeRequest, KvException.class);
        decodeOrRefuse(truncated(bytes, Math.floorMod(cut, bytes.length + 1)), KvProtocol::decodeRequest,
                KvException.class);
        byte[] padded = java.util.Arrays.copyOf(bytes, bytes.length + tail.length);
        System.arraycopy(tail, 0, padded, bytes.length, tail.length);
        KvProtocol.Request back = decodeOrRefuse(padded, KvProtocol::decodeRequest, KvException.class);
        assertEquals(tail.length == 0, back != null, "trailing bytes must be refused");
    }

    @Property
    void randomBytesAreDecodedOrRefusedAsResponses(@ForAll @Size(max = 400) byte[] bytes) {
        decodeOrRefuse(bytes, KvProtocol::decodeResponse, KvException.class);
    }

    /** The detail length (offset 16) lies, or the response is cut. */
    @Property
    void tamperedResponsesAreRefused(@ForAll int id, @ForAll @Size(max = 200) String detail,
                                     @ForAll short detailLength, @ForAll int cut) {
        byte[] bytes = toArray(KvProtocol.encode(new KvProtocol.Response(id, KvProtocol.Status.NOT_FOUND, 0, detail)));
        decodeOrRefuse(withShort(bytes, 16, detailLength), KvProtocol::decodeResponse, KvException.class);
        decodeOrRefuse(truncated(bytes, Math.floorMod(cut, bytes.length)), KvProtocol::decodeResponse,
                KvException.class);
    }

    @Property
    void randomBytesAreDecodedOrRefusedAsTheHandshake(@ForAll @Size(max = 200) byte[] bytes) {
        decodeOrRefuse(bytes, KvLayout::decode, KvException.class);
    }

    @Property
    void tamperedHandshakesAreRefusedOrConsistent(@ForAll int value, @ForAll int offsetSeed) {
        byte[] bytes = toArray(KvCodecTest.layout(64, 8).encode());
        int offset = Math.floorMod(offsetSeed, bytes.length - 3);
        KvLayout l = decodeOrRefuse(withInt(bytes, offset, value), KvLayout::decode, KvException.class);
        if (l != null) {
            // Whatever it accepted must be a table the client can index safely.
            org.junit.jupiter.api.Assertions.assertTrue(l.slotCount() > 0 && l.slotSize() > 0 && l.maxProbe() > 0
                    && (long) l.slotCount() * l.slotSize() <= l.table().length(), "accepted " + l);
        }
    }
}
