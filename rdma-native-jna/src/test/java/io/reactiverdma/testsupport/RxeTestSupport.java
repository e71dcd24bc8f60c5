package io.reactiverdma.testsupport;

import io.reactiverdma.natives.RdmaNative;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Shared by every test tagged {@code rxe}: such a test needs a real RDMA device (the Soft-RoCE device in the
 * project's VM, or real hardware). Without one it FAILS, loudly, naming the cause: it never passes by
 * skipping. Run these tests with {@code scripts/native-tests}.
 */
public final class RxeTestSupport {
    /** Tag of the tests that need an RDMA device. */
    public static final String TAG = "rxe";

    private RxeTestSupport() {
    }

    /** Fails the calling test unless an RDMA device with an ACTIVE port is present. */
    public static void requireDevice() {
        Throwable cause = RdmaNative.unavailabilityCause();
        if (cause != null) {
            fail("NO RDMA DEVICE: this test needs one and must not be skipped. Cause: " + cause
                    + ". Run the native tests inside the Soft-RoCE VM with scripts/native-tests.", cause);
        }
    }

    /**
     * The IPv4 address bound to the RDMA device's netdev, for rdma_cm tests. The VM script exports it as
     * RXE_IP; on real hardware set RXE_IP yourself. Fails the test when it is not set.
     */
    public static String deviceAddress() {
        String ip = System.getenv("RXE_IP");
        if (ip == null || ip.isBlank()) {
            fail("RXE_IP is not set: it must name the IPv4 address of the RDMA device's netdev "
                    + "(scripts/rxe-vm sets it inside the VM)");
        }
        return ip;
    }

    /** The RDMA device name to use: RXE_DEVICE if set, else null (first device). */
    public static String deviceName() {
        String name = System.getenv("RXE_DEVICE");
        return name == null || name.isBlank() ? null : name;
    }
}
