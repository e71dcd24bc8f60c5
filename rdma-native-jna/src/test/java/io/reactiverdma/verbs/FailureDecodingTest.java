package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeCallException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Review finding 9 (native layer): return codes that are not errnos are not reported as errnos. Host test. */
class FailureDecodingTest {
    @Test
    void minusOneFromALibffiCallReportsNoErrnoInsteadOfAStaleOne() {
        NativeCallException e = Failures.returned("ibv_post_send", -1, "qp", false);
        assertEquals(0, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("errno not captured"), e.getMessage());
    }

    @Test
    void positiveAndNegatedErrnosStillDecode() {
        assertEquals(12, Failures.returned("ibv_post_send", 12, null, false).errno());
        assertEquals(22, Failures.returned("ibv_post_send", -22, null, false).errno());
    }
}
