package io.reactiverdma.verbs;

import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Host test of the calling mechanisms themselves, per data-path shape: the same libc function reached
 * through its function pointer (the route of a provider's ops table) gives the same results and the same
 * side effects through libffi, FFM and FFM critical. libc stands in for the provider because the loopback
 * device is Java, not native; the device verbs are compared on rxe ({@code DowncallAgreementRxeTest}).
 * The FFM cases need JDK 22+ (on JDK 17 they are skipped: the build says the FFM path was not tested).
 */
class DowncallAgreementTest {
    private static final DataPathCall.Signature PTR_PTR_PTR = DataPathCall.Signature.PTR_PTR_PTR;
    private static final DataPathCall.Signature PTR_INT_PTR = DataPathCall.Signature.PTR_INT_PTR;
    private static final DataPathCall.Signature PTR_INT = DataPathCall.Signature.PTR_INT;

    /** One way to call. */
    private record Route(String name, DataPathCall.Binder binder, boolean critical) {
        DataPathCall bind(DataPathCall.Signature signature, long function, long self) {
            return binder.bind(signature, function, self, critical);
        }
    }

    private static List<Route> routes() {
        assumeTrue(Downcalls.FFM != null, () -> "FFM unavailable: " + Downcalls.FFM_UNAVAILABLE);
        return List.of(new Route("libffi", LibffiCall.BINDER, false), new Route("FFM", Downcalls.FFM, false),
                new Route("FFM critical", Downcalls.FFM, true));
    }

    private static long libc(String name) {
        return Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction(name));
    }

    @Test
    void postSendShapeGivesTheSameResultsThroughLibffiAndFfm() {
        // int f(void *, void *, void *) as post_send/post_recv/post_srq_recv: memcmp(a, b, n).
        ByteBuffer a = Buffers.allocate(16);
        ByteBuffer b = Buffers.allocate(16);
        long memcmp = libc("memcmp");
        for (int diff : new int[] {0, 1, -1, 100}) {
            a.put(3, (byte) 50);
            b.put(3, (byte) (50 + diff));
            List<Integer> results = new ArrayList<>();
            for (Route r : routes()) {
                results.add(r.bind(PTR_PTR_PTR, memcmp, Buffers.address(a)).call(Buffers.address(b), 16L));
            }
            assertTrue(results.stream().allMatch(r -> Integer.signum(r) == -Integer.signum(diff)), "memcmp " + results);
            assertEquals(1, results.stream().distinct().count(), "memcmp through libffi, FFM, FFM critical: " + results);
        }
    }

    @Test
    void pollCqShapePassesPointerIntAndPointerAlikeThroughLibffiAndFfm() {
        // int f(void *, int, void *) as poll_cq: memset(buffer, byte, length) fills the buffer and returns it
        // (read as an int: its low 32 bits).
        long memset = libc("memset");
        int fill = 0x41;
        for (Route r : routes()) {
            ByteBuffer buffer = Buffers.allocate(64);
            int returned = r.bind(PTR_INT_PTR, memset, Buffers.address(buffer)).call(fill, 40L);
            assertEquals((int) Buffers.address(buffer), returned, r.name());
            for (int i = 0; i < 64; i++) {
                assertEquals(i < 40 ? (byte) fill : 0, buffer.get(i), r.name() + ", byte " + i);
            }
            fill++;
        }
    }

    @Test
    void reqNotifyCqShapeGivesTheSameResultsThroughLibffiAndFfm() {
        // int f(void *, int) as req_notify_cq: sigaddset(set, signal) returns 0 and sets the bit, -1 for a
        // signal that does not exist; sigismember(set, signal) then answers 1 or 0.
        ByteBuffer set = Buffers.allocate(128);
        long add = libc("sigaddset");
        long member = libc("sigismember");
        List<String> transcripts = new ArrayList<>();
        for (Route r : routes()) {
            for (int i = 0; i < 128; i++) {
                set.put(i, (byte) 0);
            }
            DataPathCall addTo = r.bind(PTR_INT, add, Buffers.address(set));
            DataPathCall isIn = r.bind(PTR_INT, member, Buffers.address(set));
            transcripts.add(r.name() + ": " + addTo.call(10) + " " + addTo.call(-5) + " " + isIn.call(10) + " " + isIn.call(12));
        }
        assertEquals(List.of("libffi: 0 -1 1 0", "FFM: 0 -1 1 0", "FFM critical: 0 -1 1 0"), transcripts);
    }

    @Test
    void aCallOfTheWrongShapeIsRefused() {
        for (Route r : routes()) {
            DataPathCall c = r.bind(PTR_INT, libc("sigismember"), 0);
            assertEquals("a PTR_INT call called as PTR_PTR_PTR",
                    assertThrows(IllegalStateException.class, () -> c.call(1L, 2L)).getMessage(), r.name());
            assertEquals("a PTR_INT call called as PTR_INT_PTR",
                    assertThrows(IllegalStateException.class, () -> c.call(1, 2L)).getMessage(), r.name());
        }
    }
}
