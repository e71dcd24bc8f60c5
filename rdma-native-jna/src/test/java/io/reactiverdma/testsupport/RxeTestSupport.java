package io.reactiverdma.testsupport;

import io.reactiverdma.natives.RdmaNative;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

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

    /**
     * The device's per-port protocol counters ({@code /sys/class/infiniband/<dev>/ports/1/hw_counters/*}, rxe's
     * {@code sent_pkts}, {@code rcvd_rnr_err}, {@code send_rnr_err}, {@code retry_exceeded_err},
     * {@code duplicate_request}, ...), of {@link #deviceName()} or, when that is not set, summed over every device;
     * empty when the devices have none.
     */
    public static Map<String, Long> hwCounters() {
        Path root = Path.of("/sys/class/infiniband");
        Map<String, Long> counters = new TreeMap<>();
        if (!Files.isDirectory(root)) {
            return counters;
        }
        try (var devices = Files.list(root)) {
            for (Path d : (Iterable<Path>) devices::iterator) {
                Path dir = d.resolve("ports/1/hw_counters");
                if ((deviceName() != null && !d.getFileName().toString().equals(deviceName())) || !Files.isDirectory(dir)) {
                    continue;
                }
                try (var files = Files.list(dir)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        String text = Files.readString(f).trim();
                        if (text.matches("\\d+")) {
                            counters.merge(f.getFileName().toString(), Long.parseLong(text), Long::sum);
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return counters;
    }
}
