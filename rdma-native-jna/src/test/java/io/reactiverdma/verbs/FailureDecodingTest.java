package io.reactiverdma.verbs;

import io.reactiverdma.natives.NativeCallException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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

    @Test
    void aZeroReturnIsSuccessAndThrowsNothing() {
        Failures.check("ibv_modify_qp", 0);
    }

    @Test
    void aNegativeCqPollReturnIsAProviderCodeNotAnErrno() {
        // mlx5's CQ_POLL_ERR (-2) read as errno 2 said "No such file or directory"
        NativeCallException e = CompletionQueue.pollFailure("cq 7", -2);
        assertEquals(0, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("no errno reported"), e.getMessage());
        assertTrue(e.getMessage().contains("cq 7: the provider returned -2"), e.getMessage());
        assertFalse(e.getMessage().contains("No such file"), e.getMessage());
    }
}
