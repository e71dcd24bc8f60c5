package io.reactiverdma.cm;

import io.reactiverdma.natives.NativeCallException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Review finding 9 (native layer): rdma_getaddrinfo returns getaddrinfo's EAI_* codes, which are not errnos;
 * -1 (its own checks) and EAI_SYSTEM do mean "see errno". Host test.
 */
class AddrInfoFailureTest {
    @Test
    void anEaiCodeIsNamedNotReadAsErrno() {
        NativeCallException e = RdmaAddrInfo.failure(-2, 13, "node x service 1");
        assertEquals(0, e.errno(), "errno 13 was left over from another call");
        assertTrue(e.getMessage().contains("EAI_NONAME"), e.getMessage());
    }

    @Test
    void minusOneAndEaiSystemReportErrno() {
        assertEquals(22, RdmaAddrInfo.failure(-1, 22, "x").errno());
        assertEquals(110, RdmaAddrInfo.failure(-11, 110, "x").errno());
    }

    @Test
    void minusOneWithoutErrnoAndAnUnknownCodeAreNamedWithNoErrno() {
        NativeCallException noErrno = RdmaAddrInfo.failure(-1, 0, "x");
        assertEquals(0, noErrno.errno(), noErrno.getMessage());
        assertTrue(noErrno.getMessage().contains("getaddrinfo code -1"), noErrno.getMessage());
        NativeCallException unknown = RdmaAddrInfo.failure(-99, 5, "x");
        assertEquals(0, unknown.errno(), "errno 5 belongs to another call: " + unknown.getMessage());
        assertTrue(unknown.getMessage().contains("getaddrinfo code -99"), unknown.getMessage());
    }
}
