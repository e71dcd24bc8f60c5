package io.reactiverdma.reactive.impl.connection;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The 24-byte rdma_cm private data offer: layout, round trip, and what is not an offer. */
class NegotiationHostTest {

    private static final Negotiation OFFER = new Negotiation(true, 0x1122_3344_5566_7788L, 0xCAFE_BABE, 4096);

    @Test
    void encodesTheDocumentedBigEndianLayout() {
        byte[] b = OFFER.encode();
        assertEquals(Negotiation.SIZE, b.length);
        assertEquals(24, b.length);
        assertTrue(b.length <= 56, "fits a connect request's private data on IB/RoCE");
        assertEquals("RRMA", new String(b, 0, 4, StandardCharsets.US_ASCII));
        assertEquals(2, b[4], "version");
        assertEquals(1, b[5], "flags: credits");
        assertEquals(0, b[6]);
        assertEquals(0, b[7]);
        assertArrayEquals(new byte[] {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, (byte) 0x88},
                Arrays.copyOfRange(b, 8, 16), "credit word address, big-endian");
        assertArrayEquals(new byte[] {(byte) 0xCA, (byte) 0xFE, (byte) 0xBA, (byte) 0xBE},
                Arrays.copyOfRange(b, 16, 20), "rkey");
        assertArrayEquals(new byte[] {0, 0, 0x10, 0}, Arrays.copyOfRange(b, 20, 24), "receive buffer size");

        byte[] plain = new Negotiation(false, 0, 0, 64).encode();
        assertEquals(0, plain[5], "no credits: flags 0");
    }

    @Test
    void roundTrips() {
        assertEquals(OFFER, Negotiation.decode(OFFER.encode()));
        Negotiation noCredits = new Negotiation(false, 0, 0, 1);
        assertEquals(noCredits, Negotiation.decode(noCredits.encode()));
        Negotiation extremes = new Negotiation(true, -1L, -1, Integer.MAX_VALUE);
        assertEquals(extremes, Negotiation.decode(extremes.encode()), "unsigned 64-bit address and 32-bit rkey");
    }

    @Test
    void privateDataPaddedByTheTransportStillDecodes() {
        // rdma_cm on IB/RoCE delivers a connect request's private data padded with zeros to 56 bytes.
        byte[] padded = Arrays.copyOf(OFFER.encode(), 56);
        assertEquals(OFFER, Negotiation.decode(padded));
        byte[] reply = Arrays.copyOf(OFFER.encode(), 196);
        assertEquals(OFFER, Negotiation.decode(reply));
    }

    @Test
    void plainRdmaCmPeerOffersNothing() {
        assertNull(Negotiation.decode(null), "no private data");
        assertNull(Negotiation.decode(new byte[0]), "empty private data");
        assertNull(Negotiation.decode(new byte[56]), "zero padding only");
        assertNull(Negotiation.decode("hello from a plain rdma_cm client, not RRMA".getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void randomBytesAreNotAnOffer() {
        Random rnd = new Random(20240501);
        for (int i = 0; i < 10_000; i++) {
            byte[] garbage = new byte[rnd.nextInt(80)];
            rnd.nextBytes(garbage);
            if (garbage.length >= 4 && ByteBuffer.wrap(garbage).getInt() == Negotiation.MAGIC) {
                garbage[0] ^= 1;
            }
            assertNull(Negotiation.decode(garbage), () -> "garbage " + Arrays.toString(garbage));
        }
    }

    @Test
    void truncatedOfferIsNotAnOffer() {
        byte[] full = OFFER.encode();
        for (int n = 0; n < Negotiation.SIZE; n++) {
            assertNull(Negotiation.decode(Arrays.copyOf(full, n)), n + " bytes");
        }
        assertNotNull(Negotiation.decode(full));
    }

    @Test
    void magicMustMatchExactly() {
        for (int i = 0; i < 4; i++) {
            byte[] b = OFFER.encode();
            b[i] ^= 0x20; // e.g. "rRMA"
            assertNull(Negotiation.decode(b), "magic byte " + i + " altered");
        }
    }

    @Test
    void otherVersionsAreNotSpoken() {
        for (int v : new int[] {0, 1, 3, 0x7f, 0x80, 0xff}) {
            byte[] b = OFFER.encode();
            b[4] = (byte) v;
            assertNull(Negotiation.decode(b), "version " + v);
        }
    }

    @Test
    void onlyBitZeroOfTheFlagsMeansCredits() {
        byte[] b = OFFER.encode();
        b[5] = (byte) 0xFE; // every bit but credits: unknown flags are ignored
        Negotiation n = Negotiation.decode(b);
        assertNotNull(n);
        assertFalse(n.credits());
        assertEquals(OFFER.creditAddress(), n.creditAddress());

        b[5] = (byte) 0x81; // sign bit set too
        assertTrue(Negotiation.decode(b).credits());
        b[5] = (byte) 0x80;
        assertFalse(Negotiation.decode(b).credits());
        b[5] = 0;
        assertFalse(Negotiation.decode(b).credits());
    }

    @Test
    void reservedBytesAreIgnored() {
        byte[] b = OFFER.encode();
        b[6] = 0x12;
        b[7] = 0x34;
        assertEquals(OFFER, Negotiation.decode(b));
    }

    @Test
    void nonPositiveReceiveBufferSizeIsNotAnOffer() {
        assertNull(Negotiation.decode(new Negotiation(true, 8, 9, 0).encode()));
        assertNull(Negotiation.decode(new Negotiation(true, 8, 9, -4096).encode()));
        assertNull(Negotiation.decode(new Negotiation(true, 8, 9, Integer.MIN_VALUE).encode()));
    }

    @Test
    void applicationDataFollowsTheOfferWithItsLengthInByteSix() {
        byte[] app = "hello".getBytes(StandardCharsets.UTF_8);
        byte[] b = OFFER.encode(app);
        assertEquals(24 + 5, b.length);
        assertEquals(5, b[6]);
        assertEquals(OFFER, Negotiation.decode(b), "the offer reads the same");
        byte[] padded = Arrays.copyOf(b, 56); // as the CM delivers it
        assertArrayEquals(app, Negotiation.applicationData(padded));
        assertArrayEquals(new byte[0], Negotiation.applicationData(Arrays.copyOf(OFFER.encode(), 56)));
        byte[] withZeros = {1, 0, 0};
        assertArrayEquals(withZeros, Negotiation.applicationData(Arrays.copyOf(OFFER.encode(withZeros), 56)),
                "trailing zeros of the application's data are kept");
    }

    @Test
    void aLengthByteClaimingMoreThanArrivedIsMalformed() {
        byte[] b = Arrays.copyOf(OFFER.encode(new byte[32]), 56);
        b[6] = 33;
        assertNull(Negotiation.applicationData(b));
        b[6] = (byte) 255;
        assertNull(Negotiation.applicationData(b));
        b[6] = 32;
        assertNotNull(Negotiation.applicationData(b));
    }
}
