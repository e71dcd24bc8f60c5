package io.reactiverdma.verbs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which calling mechanism the data path uses: FFM on JDK 22+ (this module's JDK 22+ build puts the FFM
 * classes on the test class path and sets {@code io.reactiverdma.test.expectedDowncalls=ffm}), libffi on
 * JDK 17-21; the system property {@value Downcalls#PROPERTY} forces one, and a forced one this JVM cannot
 * use fails before a device is opened. The forcing cases run a child JVM (the choice is made once per JVM).
 */
class DowncallSelectionTest {
    private static final boolean FFM_JDK = Runtime.version().feature() >= 22;

    @Test
    void theDataPathUsesFfmOnJdk22AndLibffiBefore() {
        String expected = System.getProperty("io.reactiverdma.test.expectedDowncalls", FFM_JDK ? "ffm" : "libffi");
        assertEquals(expected.toUpperCase(java.util.Locale.ROOT), Downcalls.chosen().name(), Verbs.dataPathCalls());
        assertTrue(Verbs.dataPathCalls().startsWith(expected.equals("ffm") ? "FFM downcalls" : "libffi"), Verbs.dataPathCalls());
        if (!FFM_JDK) {
            assertEquals("FFM downcalls need JDK 22 or later; this JVM is " + Runtime.version().feature(), Downcalls.FFM_UNAVAILABLE);
        }
    }

    @Test
    void withoutThePropertyTheFastestAvailableMechanismIsChosen() {
        assertEquals(Downcalls.Mechanism.FFM, Downcalls.choose(null, null, null));
        assertEquals(Downcalls.Mechanism.LIBFFI, Downcalls.choose(null, "JDK 17", null));
        assertEquals(Downcalls.Mechanism.JNA, Downcalls.choose(" ", "JDK 17", "self-test failed"));
        assertEquals(Downcalls.Mechanism.LIBFFI, Downcalls.choose("libffi", null, null));
        assertEquals(Downcalls.Mechanism.JNA, Downcalls.choose("JNA", null, null));
    }

    @Test
    void forcingAnUnavailableMechanismIsRefusedWithTheReason() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Downcalls.choose("ffm", "FFM downcalls need JDK 22 or later; this JVM is 17", null));
        assertEquals("-Dio.reactiverdma.verbs.downcalls=ffm forces FFM downcalls (java.lang.foreign), which this JVM "
                + "cannot use: FFM downcalls need JDK 22 or later; this JVM is 17", e.getMessage());
        e = assertThrows(IllegalStateException.class, () -> Downcalls.choose("panama", null, null));
        assertEquals("-Dio.reactiverdma.verbs.downcalls=panama is not a calling mechanism: use ffm, libffi or jna "
                + "(or leave it unset to choose the fastest available)", e.getMessage());
    }

    @Test
    void forcedFfmWhereItIsUnavailableFailsBeforeADeviceIsOpened() throws Exception {
        // JDK 17-21: no FFM at all; JDK 22+: FFM without native access enabled.
        List<String> out = probe(false, "-D" + Downcalls.PROPERTY + "=ffm");
        String reason = FFM_JDK ? "native access is not enabled for unnamed module" : "FFM downcalls need JDK 22 or later";
        assertTrue(out.get(1).startsWith("open: IllegalStateException: -Dio.reactiverdma.verbs.downcalls=ffm forces FFM "
                + "downcalls (java.lang.foreign), which this JVM cannot use: " + reason), String.join("\n", out));
        assertTrue(out.get(0).startsWith("calls: libffi"), String.join("\n", out));
    }

    @Test
    void forcedLibffiIsUsedWhereFfmIsAvailable() throws Exception {
        List<String> out = probe(true, "-D" + Downcalls.PROPERTY + "=libffi");
        assertEquals("calls: libffi (Native.ffi_call, per-object argument frames) (forced by -D" + Downcalls.PROPERTY
                + "=libffi)", out.get(0), String.join("\n", out));
        // Past the check: the device lookup itself fails (no such device, or no RDMA on this host).
        assertTrue(!out.get(1).contains(Downcalls.PROPERTY), String.join("\n", out));
    }

    /** Runs {@link DowncallsProbe} in a child JVM of this JDK with this test class path. */
    private static List<String> probe(boolean nativeAccess, String... jvmArgs) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (nativeAccess) {
            command.add("--enable-native-access=ALL-UNNAMED");
        }
        command.addAll(List.of(jvmArgs));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), DowncallsProbe.class.getName()));
        Process p = new ProcessBuilder(command).redirectErrorStream(false).start();
        p.getOutputStream().close();
        // Warnings (JDK 24+ about JNA's native access) go to stderr; read it so the child never blocks.
        Thread drain = new Thread(() -> {
            try {
                p.getErrorStream().transferTo(java.io.OutputStream.nullOutputStream());
            } catch (IOException ignored) {
                // the child ended
            }
        });
        drain.start();
        String stdout = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the probe JVM did not end within 120 s");
        drain.join();
        List<String> lines = stdout.lines().filter(l -> l.startsWith("calls: ") || l.startsWith("open: ")).toList();
        assertEquals(2, lines.size(), "probe output:\n" + stdout);
        return lines;
    }
}
