package io.reactiverdma.verbs;

import com.sun.jna.Native;
import io.reactiverdma.natives.Errno;
import io.reactiverdma.natives.NativeCallException;
import io.reactiverdma.natives.RdmaNative;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/** Host tests that need libibverbs (installed on the build machine) but no RDMA device. */
class VerbsHostTest {

    @Test
    void statusEventAndStateStringsComeFromLibibverbs() {
        assertEquals("success", WcStatus.SUCCESS.describe());
        assertEquals("remote access error", WcStatus.REM_ACCESS_ERR.describe());
        assertEquals("RNR retry counter exceeded", WcStatus.RNR_RETRY_EXC_ERR.describe());
        assertEquals("Work Request Flushed Error", WcStatus.WR_FLUSH_ERR.describe());
        assertEquals("local length error", WcStatus.LOC_LEN_ERR.describe());
        assertEquals("active", PortState.ACTIVE.describe());
        assertEquals("down", PortState.DOWN.describe());
        assertEquals("SRQ limit reached", AsyncEventType.SRQ_LIMIT_REACHED.describe());
        assertEquals("local work queue catastrophic error", AsyncEventType.QP_FATAL.describe());
        assertEquals("InfiniBand channel adapter", Verbs.nodeTypeStr(NodeType.CA.value()));
    }

    @Test
    void enumLookupsCoverEveryCValue() {
        for (WcStatus s : WcStatus.values()) {
            if (s != WcStatus.UNKNOWN) {
                assertEquals(s, WcStatus.of(s.value()));
            }
        }
        assertEquals(WcStatus.UNKNOWN, WcStatus.of(999));
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, WcOpcode.of(129));
        assertTrue(WcOpcode.RECV.isReceive());
        assertTrue(!WcOpcode.RDMA_READ.isReceive());
        assertEquals(WcOpcode.UNKNOWN, WcOpcode.of(8));
        assertEquals(WrOpcode.ATOMIC_WRITE, WrOpcode.of(15));
        assertEquals(QpType.UD, QpType.of(4));
        assertEquals(Mtu.MTU_4096, Mtu.of(5));
        assertEquals(4096, Mtu.MTU_4096.bytes());
        assertEquals(AsyncEventType.WQ_FATAL, AsyncEventType.of(19));
        assertEquals(AsyncEventType.UNKNOWN, AsyncEventType.of(20));
        assertEquals(AsyncEventType.Element.SRQ, AsyncEventType.SRQ_LIMIT_REACHED.element());
    }

    @Test
    void errnoOfADirectMappedCallSurvivesForNativeGetLastError() {
        // The NULL-returning verbs (ibv_open_device, ibv_reg_mr, ibv_create_qp ...) rely on this.
        assertEquals(-1, LibC.close(-1));
        assertEquals(9 /* EBADF */, Native.getLastError());
        assertEquals(-1, LibC.fcntl(-1, LibC.F_GETFL, 0));
        assertEquals(9, Native.getLastError());
    }

    @Test
    void failuresFollowTheThreeReturnConventions() {
        NativeCallException positive = Failures.returned("ibv_modify_qp", Errno.EINVAL, "qp 17");
        assertEquals(Errno.EINVAL, positive.errno());
        assertEquals("ibv_modify_qp failed: errno 22 (Invalid argument): qp 17", positive.getMessage());
        assertEquals(Errno.ENOMEM, Failures.returned("ibv_post_send", -Errno.ENOMEM, null).errno());
        LibC.close(-1);
        assertEquals(9, Failures.returned("ibv_get_cq_event", -1, null).errno());
    }

    @Test
    void memlockHintNamesTheLimitAndItsValue() {
        String hint = Failures.memlockHint();
        assertTrue(hint.contains("ulimit -l"), hint);
        assertTrue(hint.contains("RLIMIT_MEMLOCK"), hint);
        assertTrue(hint.matches(".*currently soft (unlimited|\\d+ KiB), hard (unlimited|\\d+ KiB).*"), hint);
        NativeCallException e = new NativeCallException("ibv_reg_mr", Errno.ENOMEM, hint);
        assertTrue(e.getMessage().startsWith("ibv_reg_mr failed: errno 12 (Cannot allocate memory): the usual cause"),
                e.getMessage());
    }

    @Test
    void availabilityCauseExplainsTheMissingDevice() {
        assumeFalse(RdmaNative.isAvailable(), "this machine has an active RDMA device");
        Throwable cause = RdmaNative.unavailabilityCause();
        assertNotNull(cause);
        String m = cause.getMessage();
        if (RdmaNative.areLibrariesAvailable()) {
            assertTrue(m.startsWith("no RDMA device found (is rdma_rxe loaded?") || m.matches("device \\S+ present but .*"),
                    m);
        }
    }

    @Test
    void listingDevicesWithoutKernelSupportIsATypedFailure() {
        assumeFalse(RdmaNative.isAvailable(), "this machine has an active RDMA device");
        try {
            assertNotNull(VerbsDevice.list());
        } catch (NativeCallException e) {
            assertEquals("ibv_get_device_list", e.call());
            assertTrue(e.getMessage().contains("errno 38"), e.getMessage());
        }
    }

    @Test
    void rkeyIncrementWrapsTheKeyTagOnly() {
        assertEquals(0x12345601, Verbs.incRkey(0x12345600));
        assertEquals(0x12345600, Verbs.incRkey(0x123456ff));
    }
}
