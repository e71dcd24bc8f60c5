package io.reactiverdma.reactive.impl.connection;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Positive;
import net.jqwik.api.constraints.Size;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Fuzzes the engine's only wire decoder, the rdma_cm private data of a connect request or reply (any peer,
 * before any connection exists): it never throws, and anything that is not a whole offer of this version
 * with a positive receive buffer size is "no offer" (null: the peer is treated as a plain RDMA peer).
 */
class NegotiationFuzzTest {
    @Property
    void anyPrivateDataIsAnOfferOrNone(@ForAll @Size(max = 64) byte[] privateData) {
        Negotiation n;
        try {
            n = Negotiation.decode(privateData);
        } catch (RuntimeException e) {
            fail("decoding " + privateData.length + " bytes of private data threw " + e, e);
            return;
        }
        if (n != null) {
            assertTrue(privateData.length >= Negotiation.SIZE);
            assertTrue(n.receiveBufferSize() > 0, "accepted a receive buffer size of " + n.receiveBufferSize());
            // An accepted offer is exactly what its first 24 bytes say (flags other than credits ignored).
            byte[] again = n.encode();
            byte[] sent = Arrays.copyOf(privateData, Negotiation.SIZE);
            sent[5] &= Negotiation.FLAG_CREDITS;
            sent[6] = 0;
            sent[7] = 0;
            assertEquals(Arrays.toString(sent), Arrays.toString(again));
        }
    }

    /** rdma_cm pads private data to the transport's size (56 bytes on IB/RoCE): the padding is ignored. */
    @Property
    void offersSurvivePaddingAndAnyTamperedSizeIsRefusedUnlessPositive(
            @ForAll boolean credits, @ForAll long address, @ForAll int rkey, @ForAll @Positive int size,
            @ForAll @IntRange(max = 40) int padding, @ForAll int tamperedSize) {
        Negotiation offer = new Negotiation(credits, address, rkey, size);
        byte[] padded = Arrays.copyOf(offer.encode(), Negotiation.SIZE + padding);
        assertEquals(offer, Negotiation.decode(padded));
        java.nio.ByteBuffer.wrap(padded).putInt(20, tamperedSize);
        Negotiation tampered = Negotiation.decode(padded);
        assertEquals(tamperedSize > 0, tampered != null, "receive buffer size " + tamperedSize);
        for (int cut = 0; cut < Negotiation.SIZE; cut++) {
            assertEquals(null, Negotiation.decode(Arrays.copyOf(offer.encode(), cut)), "cut to " + cut + " bytes");
        }
        assertNotNull(offer);
    }
}
