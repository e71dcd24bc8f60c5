package io.reactiverdma.reactive.impl.cm;

import io.reactiverdma.reactive.Admission;
import io.reactiverdma.reactive.ConnectionRejectedException;
import io.reactiverdma.reactive.ConnectionRejectedException.Rejection;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The reject reason on the wire: round trip, the CM's size limit, and hostile bytes from a server. */
class RejectDataHostTest {

    @Test
    void everyRejectionRoundTripsWithItsReasonInTheCmsPadding() {
        for (Rejection r : Rejection.values()) {
            if (r == Rejection.UNSPECIFIED) {
                continue;
            }
            byte[] wire = Arrays.copyOf(RejectData.encode(r, "why: " + r), RejectData.MAX); // CM zero-pads
            ConnectionRejectedException e = RejectData.decode("10.0.0.1:7471", 28, wire);
            assertEquals(r, e.rejection());
            assertEquals("why: " + r, e.serverReason());
            assertEquals(28, e.status());
        }
    }

    @Test
    void theLongestReasonFitsTheCmsRejectAndLongerOnesAreCutAtACharacter() {
        String longest = "x".repeat(Admission.MAX_REJECT_REASON);
        assertEquals(RejectData.MAX, RejectData.encode(Rejection.REFUSED, longest).length);
        byte[] cut = RejectData.encode(Rejection.SERVER_ERROR, "é".repeat(100)); // 200 bytes of UTF-8
        assertTrue(cut.length <= RejectData.MAX);
        assertEquals("é".repeat(70), RejectData.decode("p", 28, cut).serverReason());
    }

    @Test
    void hostileOrForeignRejectDataIsUnspecifiedNeverAnError() {
        Random random = new Random(5);
        for (int i = 0; i < 2000; i++) {
            byte[] data = new byte[random.nextInt(RejectData.MAX + 1)];
            random.nextBytes(data);
            if (data.length >= 5 && random.nextBoolean()) {
                data[0] = 0x52; data[1] = 0x52; data[2] = 0x4D; data[3] = 0x4A; data[4] = 1;
            }
            ConnectionRejectedException e = RejectData.decode("p", 28, data);
            assertNotNull(e.rejection());
            if (e.rejection() == Rejection.UNSPECIFIED) {
                assertNull(e.serverReason());
            }
        }
        // A length byte beyond what arrived, an unknown code, invalid UTF-8:
        byte[] header = {0x52, 0x52, 0x4D, 0x4A, 1, 1, (byte) 200, 0};
        assertEquals(Rejection.UNSPECIFIED, RejectData.decode("p", 28, header).rejection());
        byte[] unknown = {0x52, 0x52, 0x4D, 0x4A, 1, 99, 0, 0};
        assertEquals(Rejection.UNSPECIFIED, RejectData.decode("p", 28, unknown).rejection());
        byte[] badUtf8 = {0x52, 0x52, 0x4D, 0x4A, 1, 1, 1, 0, (byte) 0xFF};
        assertEquals(Rejection.UNSPECIFIED, RejectData.decode("p", 28, badUtf8).rejection());
    }
}
