package io.reactiverdma.samples.kv;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Exit statuses of the key-value sample's main, on a host without RDMA. */
class KvCommandLineTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        return KeyValue.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** Issue 24: this printed an ArithmeticException's stack trace and exited 1, as for a bug. */
    @Test
    void aDownloadChunkTooLargeIsAUsageErrorWithoutAStackTrace() {
        assertEquals(2, run("client", "127.0.0.1", "download", "k", "99999999999"));
        String e = err.toString(StandardCharsets.UTF_8);
        assertTrue(e.startsWith("kv: download CHUNK_BYTES"), e);
        assertFalse(e.contains("\tat "), "a stack trace: " + e);
    }

    /** Issue 24: "-p" after HOST was taken for the command ("client needs a command ..., got '-p'"). */
    @Test
    void theShortPortFlagAfterHostIsAnOption() {
        // nobody listens on port 1 (or no RDMA here): a connect failure, status 1, not a usage error
        assertEquals(1, run("client", "127.0.0.1", "-p", "1", "--timeout-ms", "3000", "get", "k"));
        assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("kv: FAILED: "), err.toString(StandardCharsets.UTF_8));
    }
}
